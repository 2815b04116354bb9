"""The CUDA target: `.cu` (and `.cu.j2`) kernels, built with nvcc, verified and timed in the
GPU worker, profiled with Nsight Compute (ncu), diagnosed by ncu's rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pragma_ncu.backends.base import (
    CFamilyTarget,
    Notice,
    PoolRequest,
    ProfileOptions,
    Session,
    UsageError,
    ray_pool,
)
from pragma_ncu.backends.results import BenchReport, ProfileRun
from pragma_ncu.diagnose.engine import Rules
from pragma_ncu.infra.errors import KernelFailure, KernelNotFound, NoGPUError, PragmaError
from pragma_ncu.infra.settings import Settings, process_environment
from pragma_ncu.infra.toolchain import Check
from pragma_ncu.pool.ceilings import DeviceCeilings
from pragma_ncu.pool.runner import DeviceInfo, Runner
from pragma_ncu.pool.workers import Slot, WorkerPool, WorkerRunner
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.search.evaluator import Phases
from pragma_ncu.spec.model import ParamValue, Shape, TaskSpec
from pragma_ncu.targets.cuda import RULES
from pragma_ncu.worker.protocol import TimingConfig


class CudaTarget(CFamilyTarget):
    name = "cuda"
    rules = RULES
    device_word = "GPU"
    collectors = ("ncu",)

    def worker_command(self, settings: Settings) -> list[str]:
        from pragma_ncu.backends.cuda.worker import worker_command

        return worker_command(settings)

    def describe(self, hello: dict[str, object]) -> DeviceInfo:
        return DeviceInfo.from_json(hello)

    def pool_slots(self, request: PoolRequest, settings: Settings, timeout_s: float
                   ) -> tuple[list[Slot], Callable[[Slot], WorkerRunner]]:
        """One worker per GPU (`--gpus`), each pinned to its GPU; or Ray actors (`--ray`)."""
        from pragma_ncu.pool import devices

        if request.workers is not None:
            raise UsageError("--workers is for C/C++ kernels on the CPU; a CUDA kernel takes "
                             "--gpus")
        if request.ray is not None:
            if request.gpus is not None and request.gpus.ordinals:
                raise UsageError("with --ray, --gpus takes all or a count: Ray places the "
                                 "workers", option="--gpus")
            return ray_pool(self, request, settings, timeout_s, "gpu",
                            request.gpus.count if request.gpus else None)
        assert request.gpus is not None
        env = process_environment()  # passed through to the workers, with each one's pin
        try:
            chosen = devices.select(request.gpus, devices.list_gpus(settings.python, env))
        except ValueError as exc:
            raise UsageError(str(exc), option="--gpus") from None
        command = self.worker_command(settings)
        return (devices.gpu_slots(chosen, env),
                lambda slot: Runner(command, timeout_s=timeout_s, env=dict(slot.env)))

    def open(self, spec: TaskSpec, settings: Settings, runner: Runner, *,
             arch: str | None = None, pool: WorkerPool | None = None,
             phases: Phases | None = None, notice: Notice = lambda _: None) -> Session:
        from pragma_ncu.backends.cuda.session import CudaSession

        return CudaSession(spec, settings, runner, arch, phases, pool, notice)

    def no_device(self, reason: str) -> PragmaError:
        return NoGPUError(reason)

    def without_device(self, spec: TaskSpec, settings: Settings,
                       arch: str | None) -> str | None:
        """The spec checked and the kernel compiled at its defaults, with its resources and
        the size of its space: what tune can say without a GPU."""
        from pragma_ncu.backends.cuda.build import build
        from pragma_ncu.build import task as tasks
        from pragma_ncu.build.compile import BuildCache
        from pragma_ncu.infra.toolchain import find_nvcc, target_arch
        from pragma_ncu.search.space import Space

        built = build(tasks.build_request(spec, target_arch(arch), {},
                                          render_dir=settings.cache_dir / "rendered"),
                      find_nvcc(settings), BuildCache(settings.cache_dir / "build"))
        if built.status == "kernel_not_found":  # bad input, as the early check says it
            raise KernelNotFound(spec.kernel_name, spec.source_path.name, built.entries)
        if not built.ok:
            raise KernelFailure(built.problem)
        regs = built.resources.registers if built.resources else "?"
        return (f"{spec.kernel_name}: compiles for {built.arch} at its defaults ({regs} "
                f"registers); {Space.from_spec(spec).size} parameter points declared. tune "
                "verifies, times and profiles on a CUDA GPU: run it where `pragma-ncu doctor` "
                "finds one.")

    def bench(self, spec: TaskSpec, shapes: Sequence[Shape], settings: Settings,
              runner: Runner, *, params: dict[str, ParamValue] | None = None,
              arch: str | None = None, timing: TimingConfig | None = None,
              progress: Notice = lambda _: None,
              pool: WorkerPool | None = None) -> BenchReport:
        from pragma_ncu.backends.cuda.bench import run_bench

        return run_bench(spec, shapes, settings, runner, params=params, arch=arch,
                         timing=timing, progress=progress, pool=pool)

    def profile(self, spec: TaskSpec, shape: Shape, settings: Settings,
                options: ProfileOptions, progress: Notice = lambda _: None) -> ProfileRun:
        """Build, verify and time at `shape`, profile under ncu; then `options.repeats` more
        timing runs of the same instance."""
        from pragma_ncu.backends.cuda.collect import (
            DEFAULT_SECTIONS,
            DIAGNOSIS_METRICS,
            CollectRequest,
        )
        from pragma_ncu.backends.cuda.profiling import run_profile

        request = CollectRequest(sections=options.sections or DEFAULT_SECTIONS,
                                 metrics=DIAGNOSIS_METRICS + options.metrics,
                                 source=options.source, timeout_s=options.timeout_s)
        with self.runner(settings, options.timeout_s) as runner:
            return run_profile(spec, shape, settings, runner, self.worker_command(settings),
                               params=options.params, arch=options.arch, request=request,
                               out_dir=options.out_dir, progress=progress,
                               repeats=options.repeats)

    def checks(self, settings: Settings, profile_check: bool = True) -> list[Check]:
        """cuda-python, the GPU and driver, nvcc, ncu, ncu_report and counter permission."""
        from pragma_ncu.backends.cuda.doctor import run_checks

        return run_checks(settings, profile_check)

    def ceilings(self, settings: Settings, refresh: bool = False) -> DeviceCeilings:
        from pragma_ncu.backends.cuda import ceilings

        with self.runner(settings, 600) as runner:
            return ceilings.measure(runner, settings, refresh)

    def diagnosis(self) -> Rules:
        from pragma_ncu.backends.cuda.diagnosis import diagnose

        return diagnose

    def recognizes(self, kernel: KernelProfile) -> str | None:
        """ncu's metric names all contain '__' (gpu__time_duration.sum)."""
        return "ncu" if any("__" in name for name in kernel.metrics) else None

    def launch_duration_us(self, kernel: KernelProfile) -> float | None:
        """ncu's duration of the launch (gpu__time_duration.sum or its fallbacks)."""
        from pragma_ncu.backends.cuda.diagnosis import quantities

        reading = quantities.read(kernel, "duration_ns")
        return reading.value / 1000 if reading is not None else None

    def rule_classes(self, rule: str) -> tuple[str, ...]:
        """The bottleneck classes an ncu rule (its identifier) speaks to."""
        from pragma_ncu.backends.cuda.diagnosis import RULE_CLASSES

        return RULE_CLASSES.get(rule, ())


TARGET = CudaTarget()
