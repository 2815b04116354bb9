"""The loop's backend for C/C++ kernels: the system compiler, the CPU worker, and perf (or,
where the CPU's counters cannot be read, cachegrind) for profiles."""

from __future__ import annotations

import time
from pathlib import Path

from pragma_ncu import task as tasks
from pragma_ncu.backends.cpu import build as cpu_build
from pragma_ncu.backends.cpu import ceilings as peaks
from pragma_ncu.backends.cpu.collect import Collector, choose_collector
from pragma_ncu.backends.cpu.evaluator import CEILING_BYTES, CpuEvaluator, cpu_phases
from pragma_ncu.backends.cpu.profiling import profile_build
from pragma_ncu.build import BuildCache
from pragma_ncu.ceilings import ceiling_for
from pragma_ncu.errors import PragmaError
from pragma_ncu.loop.backend import Profiled
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.roofline import ComputeRate
from pragma_ncu.runner import HostInfo, Runner
from pragma_ncu.search.evaluator import Evaluator, Phases
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.parallel import PooledEvaluator
from pragma_ncu.search.space import Point
from pragma_ncu.settings import Settings
from pragma_ncu.spec import Shape, TaskSpec


def profiler_label(c: Collector, portable: bool = False) -> str:
    """What the trace says collected a profile, in a few words (the full reasons are in the
    profile's collection notes)."""
    label = "cachegrind (simulated: no hardware counters here)" if c.name == "cachegrind" \
        else c.name
    return label + ("; a build without -march=native (valgrind cannot run all of its "
                    "instructions)" if portable else "")


class CpuSession:
    """The loop's session on the CPU: cc/c++, the CPU worker, perf or cachegrind."""

    def __init__(self, original: TaskSpec, settings: Settings, runner: Runner,
                 phases: Phases | None = None, collector: Collector | None = None,
                 pool: WorkerPool | None = None) -> None:
        self.original, self.settings, self.runner = original, settings, runner
        self.pool = pool  # searches on all its workers; the rest on its first (the runner)
        info: HostInfo = runner.hello()
        self.host = info
        self.device = f"{info.name} ({info.cores} cores)"
        self.cache = BuildCache(settings.cache_dir / "build-cpu")
        self.ceiling_gbps: float | None = ceiling_for(
            runner, "", settings.cache_dir / "ceilings.json", nbytes=CEILING_BYTES).gbps
        self.compute: ComputeRate | None = None
        if original.flops_expr:  # the roofline needs the compute ceiling only with FLOPs
            peak = peaks.compute_ceiling_for(settings, info.cache_key, info.name)
            self.compute = ComputeRate("fp32", peak.per_second)
        self.limits = Limits.host()
        self.phases = phases or cpu_phases()
        self.collector = collector or choose_collector(settings.perf, settings.valgrind)

    def evaluator(self, spec: TaskSpec) -> Evaluator:
        def on(runner: Runner) -> Evaluator:
            return CpuEvaluator(spec, self.settings, runner, self.limits, self.phases,
                                reference=self.original)
        if self.pool is None:
            return on(self.runner)
        return PooledEvaluator(self.pool, lambda lane: on(lane.runner))  # type: ignore[arg-type]

    def check(self, spec: TaskSpec) -> str | None:
        try:
            req = tasks.build_request(spec, cpu_build.HOST_ARCH, {},
                                      render_dir=self.settings.cache_dir / "rendered")
            cc = cpu_build.find_compiler(self.settings, cpu_build.is_cxx(spec.source_path.name))
        except PragmaError as exc:
            return str(exc)
        built = cpu_build.build(req, cc, self.cache)
        return None if built.ok else built.log or built.status

    def profile(self, spec: TaskSpec, point: Point, shape: Shape, out_dir: Path) -> Profiled:
        """The instance at `point` under the chosen collector at `shape` (one call)."""
        built = self.evaluator(spec).build(dict(point))
        if not built.ok or built.cubin_path is None or built.symbol is None:
            return Profiled(None, problem=f"does not build: {built.status}")
        try:
            profile = profile_build(spec, dict(point), shape, built, self.settings, out_dir,
                                    self.collector)
        except PragmaError as exc:
            return Profiled(None, problem=str(exc))
        if not profile.kernels:
            return Profiled(None, problem="the collector recorded no kernel")
        path = out_dir / "profile.json"
        profile.save(path)
        portable = bool(profile.collection.get("portable_build"))
        return Profiled(profile.kernels[0], str(path),
                        profiler=profiler_label(self.collector, portable))

    def clock(self) -> float:
        return time.perf_counter()
