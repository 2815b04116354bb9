"""The evaluator of CPU kernels: the system compiler builds a shared object, the CPU worker
(`python -m pragma_ncu.worker --cpu`) verifies it against the reference and times it."""

from __future__ import annotations

from pragma_ncu import task as tasks
from pragma_ncu.build import BuildCache, BuildResult
from pragma_ncu.cpu import build as cpu_build
from pragma_ncu.errors import TemplateError
from pragma_ncu.measurement import Measurement
from pragma_ncu.runner import Runner
from pragma_ncu.settings import Settings
from pragma_ncu.spec import Shape, TaskSpec
from pragma_ncu.tuner.evaluator import Phases, failed_build
from pragma_ncu.tuner.feasibility import Limits
from pragma_ncu.tuner.space import Point
from pragma_ncu.worker.protocol import KernelRef, TimingConfig

CEILING_BYTES = 1 << 28  # the host copy that measures a CPU's bandwidth ceiling


def cpu_phases() -> Phases:
    """Timing per phase on the CPU: caches flushed before every sample, no copy-scale in the
    search (it is taken once per shape in the re-test)."""
    return Phases(
        search=TimingConfig(warmup_ms=5.0, min_reps=10, max_reps=1000, budget_ms=40.0,
                            copy_reference=False),
        retest=TimingConfig(warmup_ms=10.0, min_reps=30, max_reps=5000, budget_ms=150.0,
                            copy_reference=True))


class CpuEvaluator:
    """Compiles with the system compiler (cached) and measures in the runner's CPU worker."""

    def __init__(self, spec: TaskSpec, settings: Settings, runner: Runner,
                 limits: Limits | None = None, phases: Phases | None = None,
                 reference: TaskSpec | None = None) -> None:
        self.spec, self.settings, self.runner = spec, settings, runner
        # without a NumPy reference, the original at its defaults is the reference
        self.reference = reference or spec
        self.limits = limits or Limits.host()
        self.phases = phases or cpu_phases()
        self.cache = BuildCache(settings.cache_dir / "build-cpu")
        self.source = tasks.read_source(spec)
        self._original: BuildResult | None = None

    def build(self, point: Point) -> BuildResult:
        return self._build(self.spec, point, self.source)

    def _build(self, spec: TaskSpec, point: Point, source: str | None = None) -> BuildResult:
        try:
            req = tasks.build_request(spec, cpu_build.HOST_ARCH, point, source=source,
                                      render_dir=self.settings.cache_dir / "rendered")
            cc = cpu_build.find_compiler(self.settings, cpu_build.is_cxx(spec.source_path.name))
        except TemplateError as exc:
            return failed_build(spec.kernel_name, cpu_build.HOST_ARCH, str(exc))
        return cpu_build.build(req, cc, self.cache)

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        task = self.spec.resolve(shape, point)
        req = tasks.eval_request(self.spec, task, built, None,
                                 original=self._reference_kernel(shape),
                                 seeds=self.phases.seeds(phase),
                                 timing=self.phases.timing(phase))
        return self.runner.evaluate(req)

    def _reference_kernel(self, shape: Shape) -> KernelRef | None:
        if self.spec.reference.function:
            return None
        if self._original is None:
            self._original = self._build(self.reference, {})
            if not self._original.ok:
                raise TemplateError(f"the kernel at its default parameters does not build, so "
                                    f"it cannot serve as the reference:\n{self._original.log}")
        return tasks.kernel_ref(self._original, self.reference.resolve(shape, {}))

