"""Evaluators: how a point becomes a build and a build becomes measurements.

The search only sees the `Evaluator` protocol, so the same search runs on any target (each
backend's evaluator: the CUDA one compiles with nvcc and measures in the GPU worker, the CPU one
with the system compiler in the CPU worker; both are `CompiledEvaluator`s) and in the tests
(tests/fakes/replay.py: measurements recorded on a GPU, played back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from pragma_ncu.build import task as tasks
from pragma_ncu.build.compile import BuildRequest, BuildResult, failed_build
from pragma_ncu.infra.errors import TemplateError
from pragma_ncu.infra.settings import Settings
from pragma_ncu.measure.measurement import Measurement
from pragma_ncu.pool.runner import Runner
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.space import Point
from pragma_ncu.spec.model import Shape, TaskSpec
from pragma_ncu.worker.protocol import KernelRef, TimingConfig

SEARCH = "search"
RETEST = "retest"
CHECK = "check"  # verify only, no timing: the shapes a point must be right at but is not tuned for
CALIBRATE = "calibrate"  # a search's timing of one point on every worker: it measures the device


@dataclass(frozen=True)
class Phases:
    """Timing and verification per phase: short runs while searching, long ones to re-test.

    Both phases verify before timing and re-verify after it; the re-test draws fresh inputs
    (other seeds) so a winner is checked on data the search never saw, and keeps every
    sample, which the acceptance rule compares (`search.compare`). A long launch takes fewer
    repetitions (`long_ms`: a 276 ms SGEMM took 50 in every re-test round, 14 s a shape):
    at least 3 in the search, 5 in a re-test (over its two or more rounds, 10 samples a side
    or more, which the per-launch interval needs: about 4).
    """

    search: TimingConfig = field(default_factory=lambda: TimingConfig(
        warmup_ms=5.0, min_reps=10, max_reps=1000, budget_ms=25.0, copy_reference=False,
        long_ms=100.0, floor_reps=3))
    retest: TimingConfig = field(default_factory=lambda: TimingConfig(
        warmup_ms=10.0, min_reps=50, max_reps=5000, budget_ms=150.0, copy_reference=True,
        keep_samples=True, long_ms=600.0, floor_reps=5))
    search_seeds: tuple[int, ...] = (1, 2)
    retest_seeds: tuple[int, ...] = (3, 4)

    def timing(self, phase: str) -> TimingConfig | None:
        return {SEARCH: self.search, CALIBRATE: self.search, RETEST: self.retest}.get(phase)

    def seeds(self, phase: str) -> tuple[int, ...]:
        return self.retest_seeds if phase == RETEST else self.search_seeds


class Evaluator(Protocol):
    limits: Limits

    def build(self, point: Point) -> BuildResult:
        """Compile the kernel at `point`; thread-safe (called from a pool ahead of the GPU)."""
        ...

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        """Verify and time the built point at one shape (verify only in the CHECK phase);
        failures are statuses."""
        ...


class CompiledEvaluator:
    """What every evaluator that compiles a point and measures it in a worker does the same
    way: render the template, compile (through `compile`, the backend's compiler), and send
    verify-and-time orders with the reference the spec names, or else the reference kernel at
    its defaults (a rewrite is checked against the user's original, never against itself)."""

    def __init__(self, spec: TaskSpec, settings: Settings, runner: Runner, arch: str,
                 harness: BuildResult | None, limits: Limits, phases: Phases,
                 reference: TaskSpec | None = None) -> None:
        self.spec, self.settings, self.runner = spec, settings, runner
        self.reference = reference or spec
        self.arch, self.harness, self.limits, self.phases = arch, harness, limits, phases
        self.source = tasks.read_source(spec)
        self._original: BuildResult | None = None

    def compile(self, spec: TaskSpec, req: BuildRequest) -> BuildResult:
        """The backend's compile of one request (cached)."""
        raise NotImplementedError

    def build(self, point: Point) -> BuildResult:
        return self._build(self.spec, point, self.source)

    def _build(self, spec: TaskSpec, point: Point, source: str | None = None) -> BuildResult:
        try:
            req = tasks.build_request(spec, self.arch, point, source=source,
                                      render_dir=self.settings.cache_dir / "rendered")
        except TemplateError as exc:
            return failed_build(spec.kernel_name, self.arch, str(exc), str(spec.source_path))
        return self.compile(spec, req)

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        task = self.spec.resolve(shape, point)
        req = tasks.eval_request(self.spec, task, built, self.harness,
                                 original=self._reference_kernel(shape),
                                 seeds=self.phases.seeds(phase),
                                 timing=self.phases.timing(phase))
        return self.runner.evaluate(req)

    def _reference_kernel(self, shape: Shape) -> KernelRef | None:
        """Without a reference function, the reference kernel at its defaults is the
        reference."""
        if self.spec.reference.function:
            return None
        if self._original is None:
            self._original = self._build(self.reference, {})
            if not self._original.ok:
                raise TemplateError(f"the kernel at its default parameters does not build, so "
                                    f"it cannot serve as the reference: "
                                    f"{self._original.problem}")
        return tasks.kernel_ref(self._original, self.reference.resolve(shape, {}))
