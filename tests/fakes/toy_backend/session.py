"""What the loop and the search use of the toy: its evaluator, its compile check, its profile."""

from __future__ import annotations

import time
from pathlib import Path

from pragma_ncu.backends.base import Profiled
from pragma_ncu.measure.roofline import ComputeRate
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.space import Point
from pragma_ncu.spec.model import Shape, TaskSpec
from tests.fakes.toy_backend.collect import collect
from tests.fakes.toy_backend.evaluator import ToyEvaluator


class ToySession:
    def __init__(self, original: TaskSpec, device: str) -> None:
        self.original = original
        self.device = device
        self.identity = f"{device} (toy)"
        self.ceiling_gbps: float | None = None  # no ceilings: no roofline, the loop's stops
        self.compute: ComputeRate | None = None  # are patience and the round budget
        self.compute_ceilings: dict[str, float] | None = None
        self.limits = Limits.host()

    def evaluator(self, spec: TaskSpec) -> ToyEvaluator:
        return ToyEvaluator(spec, self.original)

    def check(self, spec: TaskSpec) -> str | None:
        built = self.evaluator(spec).build({})
        return None if built.ok else built.log

    def profile(self, spec: TaskSpec, point: Point, shape: Shape, out_dir: Path) -> Profiled:
        profile = collect(spec, point, shape, out_dir)
        return Profiled(profile.kernels[0], str(out_dir / "profile.json"),
                        profiler="toycount", collector=profile.collector)

    def clock(self) -> float:
        return time.perf_counter()
