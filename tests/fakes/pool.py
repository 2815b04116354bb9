"""Many simulated GPUs: real worker processes (tests/fakes/fake_worker.py), each with its own
identity, speed, delay and planted failures, and an evaluator that sends them real requests.

    pool = fake_pool(tmp, [FakeGpu("GPU-a"), FakeGpu("GPU-b", die_at=5)]).start()
    evaluator = PooledEvaluator(pool, lambda lane: FakeGpuEvaluator(lane.runner))

A point's time is `silu_like_cost(point, shape)` (one best point), times the GPU's speed; a point
in `modes` gets that fake-worker behaviour ("crash", "hang", ...) on every GPU.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from pragma_ncu.build.compile import BuildResult, KernelResources
from pragma_ncu.measure.measurement import Measurement
from pragma_ncu.pool.runner import Runner
from pragma_ncu.pool.workers import Slot, WorkerPool
from pragma_ncu.search.space import Point, point_key
from pragma_ncu.spec.model import Shape
from tests.fakes.requests import fake_request
from tests.fakes.tuner import H200_LIMITS, silu_like_cost

ROOT = Path(__file__).resolve().parents[2]
FAKE = [sys.executable, str(ROOT / "tests" / "fakes" / "fake_worker.py")]
_request = functools.lru_cache(maxsize=None)(fake_request)


@dataclass(frozen=True)
class FakeGpu:
    uuid: str
    name: str = "Fake H200"
    speed: float = 1.0
    delay_s: float = 0.0
    die_at: int | None = None  # killed (SIGKILL) at this evaluate, once
    hang_at: int | None = None  # hangs at this evaluate, once
    broken: bool = False  # every evaluate kills its worker
    no_start: bool = False  # its worker never starts
    extra: dict[str, str] = field(default_factory=dict)

    def env(self, tmp: Path, log: Path | None) -> dict[str, str]:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": self.uuid, "FAKE_GPU_NAME": self.name,
               "FAKE_GPU_SPEED": str(self.speed), "FAKE_GPU_DELAY": str(self.delay_s),
               **self.extra}
        if log is not None:
            env["FAKE_GPU_LOG"] = str(log)
        if self.die_at is not None:
            env["FAKE_GPU_DIE_AT"] = f"{self.die_at}:{tmp / (self.uuid + '.died')}"
        if self.hang_at is not None:
            env["FAKE_GPU_HANG_AT"] = f"{self.hang_at}:{tmp / (self.uuid + '.hung')}"
        if self.broken:
            env["FAKE_GPU_BROKEN"] = "1"
        if self.no_start:
            env["FAKE_GPU_NO_START"] = "1"
        return env


def fake_pool(tmp: Path, gpus: list[FakeGpu], *, timeout_s: float = 10.0,
              log: Path | None = None, notices: list[str] | None = None,
              pin: bool = True) -> WorkerPool:
    """A pool of fake GPU workers (not started); `notices` collects the pool's messages."""
    slots = [Slot(f"gpu{i}", tuple(g.env(tmp, log).items()), g.uuid if pin else "")
             for i, g in enumerate(gpus)]
    sink = notices.append if notices is not None else (lambda _: None)
    return WorkerPool(slots, lambda s: Runner(FAKE, timeout_s=timeout_s, env=dict(s.env)),
                      notice=sink)


class FakeGpuEvaluator:
    """Builds are instant and fake; measuring sends the fake worker a real request whose
    symbol is the point's mode and whose COST param is the point's time."""

    def __init__(self, runner: Runner, modes: Callable[[Point], str] = lambda p: "ok",
                 cost: Callable[[Point, str], float] = silu_like_cost) -> None:
        self.runner, self.modes, self.cost = runner, modes, cost
        self.limits = H200_LIMITS
        self.builds: list[str] = []

    def build(self, point: Point) -> BuildResult:
        self.builds.append(point_key(point))
        return BuildResult(status="ok", kernel_name="k", symbol=self.modes(point),
                           cubin_path="k.cubin", resources=KernelResources(registers=32),
                           log="", arch="sm_90", command=(), key=point_key(point))

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        req = _request(built.symbol or "ok")
        seeds = (3, 4) if phase == "retest" else (1, 2)
        task = replace(req.task, shape_name=shape.name,
                       params={"COST": self.cost(point, shape.name)})
        return self.runner.evaluate(replace(req, task=task,
                                            check=replace(req.check, seeds=seeds)))
