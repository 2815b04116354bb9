"""The evaluator of CPU kernels: the system compiler builds a shared object, the CPU worker
verifies it against the reference and times it."""

from __future__ import annotations

from pragma_ncu.backends.cpu import build as cpu_build
from pragma_ncu.build.compile import BuildCache, BuildRequest, BuildResult
from pragma_ncu.infra.settings import Settings
from pragma_ncu.pool.runner import Runner
from pragma_ncu.search.evaluator import CompiledEvaluator, Phases
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.spec.model import TaskSpec
from pragma_ncu.worker.protocol import TimingConfig

CEILING_BYTES = 1 << 28  # the host copy that measures a CPU's bandwidth ceiling


def cpu_phases() -> Phases:
    """Timing per phase on the CPU: caches flushed before every sample, no copy-scale in the
    search (it is taken once per shape in the re-test)."""
    return Phases(
        search=TimingConfig(warmup_ms=5.0, min_reps=10, max_reps=1000, budget_ms=40.0,
                            copy_reference=False, long_ms=100.0, floor_reps=3),
        retest=TimingConfig(warmup_ms=10.0, min_reps=30, max_reps=5000, budget_ms=150.0,
                            copy_reference=True, keep_samples=True, long_ms=600.0,
                            floor_reps=5))


class CpuEvaluator(CompiledEvaluator):
    """Compiles with the system compiler (cached) and measures in the runner's CPU worker."""

    def __init__(self, spec: TaskSpec, settings: Settings, runner: Runner,
                 limits: Limits | None = None, phases: Phases | None = None,
                 reference: TaskSpec | None = None) -> None:
        super().__init__(spec, settings, runner, cpu_build.HOST_ARCH, None,
                         limits or Limits.host(), phases or cpu_phases(), reference)
        self.cache = BuildCache(settings.cache_dir / "build-cpu")

    def compile(self, spec: TaskSpec, req: BuildRequest) -> BuildResult:
        cc = cpu_build.find_compiler(self.settings, cpu_build.is_cxx(spec.source_path.name))
        return cpu_build.build(req, cc, self.cache)
