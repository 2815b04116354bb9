"""The loop's and the search's view of the CPU target: the system compiler, the CPU worker,
and perf (or, where the CPU's counters cannot be read, cachegrind) for profiles."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.backends.base import CompiledSession, Notice, Profiled
from pragma_ncu.backends.cpu import ceilings as peaks
from pragma_ncu.backends.cpu.collect import Collector, choose_collector
from pragma_ncu.backends.cpu.evaluator import CEILING_BYTES, CpuEvaluator, cpu_phases
from pragma_ncu.backends.cpu.profiling import profile_build
from pragma_ncu.infra.errors import PragmaError
from pragma_ncu.infra.settings import Settings
from pragma_ncu.measure.roofline import ComputeRate
from pragma_ncu.pool.ceilings import ceiling_for
from pragma_ncu.pool.runner import HostInfo, Runner
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.search.evaluator import CompiledEvaluator, Phases
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.space import Point
from pragma_ncu.spec.file import check_shapes
from pragma_ncu.spec.model import Shape, TaskSpec
from pragma_ncu.worker.guards import worker_memory


def profiler_label(collector: Collector, portable: bool = False) -> str:
    """What the trace says collected a profile, in a few words (the full reasons are in the
    profile's collection notes)."""
    label = "cachegrind (simulated: no hardware counters here)" if collector.name == "cachegrind" \
        else collector.name
    return label + ("; a build without -march=native (valgrind cannot run all of its "
                    "instructions)" if portable else "")


class CpuSession(CompiledSession):
    """Opened on a started CPU worker: the host, its measured copy ceiling and (with the
    spec's FLOPs) its FP32 compute ceiling; the collector is chosen at the first profile."""

    def __init__(self, original: TaskSpec, settings: Settings, runner: Runner,
                 phases: Phases | None = None, pool: WorkerPool | None = None,
                 notice: Notice = lambda _: None) -> None:
        info: HostInfo = runner.hello()
        check_shapes(original, memory=worker_memory(info.memory_bytes, f"this host ({info.name})"))
        super().__init__(original, settings, runner, pool, phases or cpu_phases(),
                         Limits.host(), f"{info.name} ({info.cores} cores)")
        self.host = info
        self.identity = f"{info.name}, {info.cores} cores, {info.machine}, {info.kernel}"
        self.ceiling_gbps = ceiling_for(runner, "", settings.cache_dir / "ceilings.json",
                                        nbytes=CEILING_BYTES).gbps
        if original.flops_expr:  # the roofline needs the compute ceiling only with FLOPs
            notice("the CPU's compute ceiling")
            peak = peaks.compute_ceiling_for(settings, info.cache_key, info.name)
            self.compute = ComputeRate("fp32", peak.per_second)
        self.compute_ceilings = self.known_compute(info.cache_key)
        self._collector: Collector | None = None

    @property
    def collector(self) -> Collector:
        if self._collector is None:
            self._collector = choose_collector(self.settings.perf, self.settings.valgrind)
        return self._collector

    def make_evaluator(self, spec: TaskSpec, runner: Runner) -> CompiledEvaluator:
        return CpuEvaluator(spec, self.settings, runner, self.limits, self.phases,
                            reference=self.original)

    def profile(self, spec: TaskSpec, point: Point, shape: Shape, out_dir: Path) -> Profiled:
        """The instance at `point` under the chosen collector at `shape` (one call)."""
        built = self.evaluator(spec).build(dict(point))
        if not built.ok or built.cubin_path is None or built.symbol is None:
            return Profiled(None, problem=built.problem or "the build has no function")
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
                        profiler=profiler_label(self.collector, portable),
                        collector=profile.collector)
