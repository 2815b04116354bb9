"""Playing back measurements recorded on a GPU: the evaluator of the tests (CI has no GPU).

A recording is the `evaluations` list of a search result (see `SearchResult.to_json`). Builds
come back with their recorded status and registers; each measurement comes back as recorded,
optionally scaled by a deterministic jitter so that re-tests see noise. The evaluator keeps its
own clock, advanced by the recorded compile and GPU seconds, so time-to-target figures of a
replayed search are reproducible.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pragma_ncu.build.compile import BuildResult, KernelResources, failed_build
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.results import Evaluation
from pragma_ncu.search.space import Point, point_key
from pragma_ncu.spec.model import Shape


class ReplayEvaluator:
    def __init__(self, recorded: Iterable[Evaluation], limits: Limits, *, jitter_pct: float = 0.0,
                 seed: int = 0, jobs: int = 1) -> None:
        self.limits = limits
        self.records = {e.key: e for e in recorded if e.status != "infeasible" or e.registers}
        self.jitter_pct = jitter_pct
        self.rng = random.Random(seed)
        self.jobs = max(1, jobs)
        self.now = 0.0
        self.builds = 0
        self.measures = 0

    def clock(self) -> float:
        return self.now

    def build(self, point: Point) -> BuildResult:
        rec = self._record(point)
        self.builds += 1
        self.now += rec.compile_s / self.jobs
        if rec.status in ("compile_error", "kernel_not_found"):
            return replace(failed_build("replayed", "sm_90", rec.message), status=rec.status)
        res = KernelResources(registers=rec.registers or 0, spill_stores=rec.spill_bytes)
        return BuildResult(status="ok", kernel_name="replayed", symbol="replayed",
                           cubin_path="replayed.cubin", resources=res, log="", arch="sm_90",
                           command=(), key=rec.key, seconds=rec.compile_s)

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        rec = self._record(point)
        self.measures += 1
        m = next((m for m in (*rec.measurements, *rec.checked) if m.shape == shape.name), None)
        if m is None:  # the recorded run stopped at an earlier failing shape
            return Measurement(Status.WORKER_CRASH, shape.name, "not recorded at this shape")
        self.now += m.seconds
        if m.timing is None or not self.jitter_pct:
            return m
        factor = 1.0 + self.rng.uniform(-self.jitter_pct, self.jitter_pct) / 100.0
        t = m.timing
        timing = replace(t, median_us=t.median_us * factor, mean_us=t.mean_us * factor,
                         min_us=t.min_us * factor, max_us=t.max_us * factor,
                         p10_us=t.p10_us * factor, p90_us=t.p90_us * factor)
        return replace(m, timing=timing)

    def _record(self, point: Point) -> Evaluation:
        key = point_key(point)
        if key not in self.records:
            raise KeyError(f"no recorded evaluation of {key}")
        return self.records[key]


def load_recording(path: Path) -> tuple[list[Evaluation], dict[str, Any]]:
    """The evaluations of a saved search result (`results.json`, optionally gzipped) and the
    rest of the file (device, shapes, ...)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        data = json.load(fh)
    evaluations = [Evaluation.from_json(e) for e in data.get("evaluations", [])]
    return evaluations, {k: v for k, v in data.items() if k != "evaluations"}
