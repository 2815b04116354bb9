"""Where the loop's kernels run: the GPU, or (in tests) recorded measurements and profiles.

The loop sees only the `Backend` protocol: an evaluator per variant for the search, a compile
check for the coder's replies, and a profile of one instance.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pragma_ncu import task as tasks
from pragma_ncu.bench import measured_compute
from pragma_ncu.build import BuildCache, BuildResult, build
from pragma_ncu.ceilings import ceiling_for
from pragma_ncu.errors import PragmaError
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.profile.run import run_profile
from pragma_ncu.roofline import ComputeRate
from pragma_ncu.runner import DeviceInfo, Runner
from pragma_ncu.search.evaluator import Evaluator, GpuEvaluator, Phases
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.parallel import PooledEvaluator
from pragma_ncu.search.space import Point
from pragma_ncu.settings import Settings
from pragma_ncu.spec import Shape, TaskSpec
from pragma_ncu.toolchain import DEFAULT_ARCH, NvccInfo, arch_flag, find_nvcc


@dataclass(frozen=True)
class Profiled:
    """One profiled instance: its kernel's profile, or why there is none."""

    kernel: KernelProfile | None
    path: str = ""
    problem: str = ""
    profiler: str = ""  # the collector, and why that one where there was a choice
    resources: dict[str, float] | None = None  # the build's ptxas report (spills, stack)


class Backend(Protocol):
    device: str
    ceiling_gbps: float | None
    compute: ComputeRate | None  # the compute ceiling the spec's FLOPs run on, if it has any
    limits: Limits

    def evaluator(self, spec: TaskSpec) -> Evaluator:
        """The search's evaluator for a variant's spec."""
        ...

    def check(self, spec: TaskSpec) -> str | None:
        """Compile `spec` at its defaults: None when it builds, else the error text."""
        ...

    def profile(self, spec: TaskSpec, point: Point, shape: Shape, out_dir: Path) -> Profiled:
        """Profile the instance at `point` under ncu at `shape`."""
        ...

    def clock(self) -> float:
        ...


class GpuBackend:
    """The real thing: nvcc, the worker process, ncu. With a `pool`, the searches measure on
    all its GPUs, and re-tests, side-by-side comparisons and profiles run on its first (the
    runner is then the pool's primary)."""

    def __init__(self, original: TaskSpec, settings: Settings, runner: Runner,
                 worker: list[str], arch: str | None = None,
                 phases: Phases | None = None, pool: WorkerPool | None = None) -> None:
        self.original, self.settings, self.runner, self.worker = original, settings, runner, worker
        self.pool = pool
        info: DeviceInfo = runner.hello()
        self.device = info.name
        self.arch = arch_flag(arch) if arch else (info.arch or DEFAULT_ARCH)
        self.nvcc: NvccInfo = find_nvcc(settings)
        self.harness: BuildResult = tasks.build_harness(self.arch, self.nvcc, settings)
        assert self.harness.cubin_path is not None
        self.ceiling_gbps: float | None = ceiling_for(runner, self.harness.cubin_path,
                                        settings.cache_dir / "ceilings.json").gbps
        self.limits = Limits.from_device(info)
        self.phases = phases or Phases()
        self.compute: ComputeRate | None = None
        if original.flops_expr:  # the roofline needs the compute ceiling only with FLOPs
            ceiling = measured_compute(runner, self.arch, self.nvcc, settings)
            self.compute = ComputeRate(original.compute, ceiling.per_second)

    def evaluator(self, spec: TaskSpec) -> Evaluator:
        def on(runner: Runner) -> Evaluator:
            return GpuEvaluator(spec, self.settings, runner, self.nvcc, self.arch, self.harness,
                                self.limits, self.phases, reference=self.original)
        if self.pool is None:
            return on(self.runner)
        return PooledEvaluator(self.pool, lambda lane: on(lane.runner))  # type: ignore[arg-type]

    def check(self, spec: TaskSpec) -> str | None:
        try:
            req = tasks.build_request(spec, self.arch, {},
                                      render_dir=self.settings.cache_dir / "rendered")
        except PragmaError as exc:
            return str(exc)
        built = build(req, self.nvcc, BuildCache(self.settings.cache_dir / "build"))
        return None if built.ok else built.log or built.status

    def profile(self, spec: TaskSpec, point: Point, shape: Shape, out_dir: Path) -> Profiled:
        try:
            pin = dict(self.pool.primary.slot.env) if self.pool is not None else {}
            run = run_profile(spec, shape, self.settings, self.runner, self.worker,
                              params=dict(point), arch=self.arch, out_dir=out_dir,
                              env=pin or None)
        except PragmaError as exc:
            return Profiled(None, problem=str(exc))
        if run.profile is None or not run.profile.kernels:
            return Profiled(None, problem=run.problem or "the report holds no kernel")
        kernel = next((k for k in run.profile.kernels if k.name == spec.kernel_name),
                      run.profile.kernels[0])
        return Profiled(kernel, str(run.profile_path or ""),
                        profiler=f"ncu {run.profile.ncu_version}".strip(),
                        resources=run.profile.collection.get("resources"))

    def clock(self) -> float:
        return time.perf_counter()
