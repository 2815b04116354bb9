"""The CPU target: C and C++ functions (`.c`, `.cc`, `.cpp`, `.cxx`, `.c++`, and their `.j2`
templates), built with the system compiler into shared objects, verified and timed in the CPU
worker through ctypes, profiled with Linux perf or, without hardware counters, valgrind's
cachegrind, and diagnosed by those collectors' rules."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

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
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import Check
from pragma_ncu.pool.ceilings import DeviceCeilings
from pragma_ncu.pool.runner import HostInfo, Runner
from pragma_ncu.pool.workers import Slot, WorkerPool, WorkerRunner
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.search.evaluator import Phases
from pragma_ncu.spec.model import ParamValue, Shape, TaskSpec
from pragma_ncu.targets.cpu import RULES
from pragma_ncu.worker.protocol import TimingConfig


class CpuTarget(CFamilyTarget):
    name = "cpu"
    rules = RULES
    device_word = "CPU"
    collectors = ("perf", "cachegrind")

    def worker_command(self, settings: Settings) -> list[str]:
        from pragma_ncu.backends.cpu.worker import worker_command

        return worker_command(settings)

    def describe(self, hello: dict[str, object]) -> HostInfo:
        return HostInfo.from_json(hello)

    def pool_slots(self, request: PoolRequest, settings: Settings, timeout_s: float
                   ) -> tuple[list[Slot], Callable[[Slot], WorkerRunner]]:
        """`--workers N` CPU worker processes on this host, or Ray actors of one CPU each."""
        if request.gpus is not None:
            raise UsageError("a C/C++ kernel runs on the CPU: use --workers N, not --gpus")
        if request.workers is None:
            raise UsageError("--ray with a C/C++ kernel needs --workers N")
        if request.ray is not None:
            return ray_pool(self, request, settings, timeout_s, "cpu", request.workers,
                            cpus=max(request.workers, os.cpu_count() or 1))
        return ([Slot(f"cpu{i}") for i in range(request.workers)],
                lambda _: self.runner(settings, timeout_s))

    def open(self, spec: TaskSpec, settings: Settings, runner: Runner, *,
             arch: str | None = None, pool: WorkerPool | None = None,
             phases: Phases | None = None, notice: Notice = lambda _: None) -> Session:
        from pragma_ncu.backends.cpu.session import CpuSession

        return CpuSession(spec, settings, runner, phases, pool, notice)

    def bench(self, spec: TaskSpec, shapes: Sequence[Shape], settings: Settings, runner: Runner,
              *, params: dict[str, ParamValue] | None = None, arch: str | None = None,
              timing: TimingConfig | None = None, progress: Notice = lambda _: None,
              pool: WorkerPool | None = None) -> BenchReport:
        raise UsageError(f"bench builds CUDA kernels with nvcc; {spec.source_path.name} is "
                          "C/C++ for the CPU: `pragma-ncu tune --kernel` (or profile) verifies "
                          "and times it")

    def checks(self, settings: Settings, profile_check: bool = True) -> list[Check]:
        """The C and C++ compilers, perf (and whether it reads the CPU's counters here) and
        valgrind, whose cachegrind is the fallback where they cannot be read."""
        from pragma_ncu.backends.cpu.doctor import run_checks

        return run_checks(settings, profile_check)

    def profile(self, spec: TaskSpec, shape: Shape, settings: Settings,
                options: ProfileOptions, progress: Notice = lambda _: None) -> ProfileRun:
        """Verify and time in the CPU worker (`options.repeats` times, at least once), then
        profile one call with perf, or cachegrind where the counters cannot be read."""
        from pragma_ncu.backends.cpu.profiling import profile_kernel

        folder = options.out_dir or Path("pragma-ncu-profiles") / f"{spec.kernel_name}-" \
                                                                 f"{shape.name}"
        with self.runner(settings, options.timeout_s) as runner:
            return profile_kernel(spec, shape, settings, runner, folder, options.params,
                                  repeats=max(1, options.repeats), progress=progress)

    def ceilings(self, settings: Settings, refresh: bool = False) -> DeviceCeilings:
        """This host's copy bandwidth and FP32 FMA rate over all its cores."""
        from pragma_ncu.backends.cpu import ceilings
        from pragma_ncu.backends.cpu.evaluator import CEILING_BYTES
        from pragma_ncu.pool.ceilings import ceiling_for

        with self.runner(settings, 600) as runner:
            host = runner.hello()
            copy = ceiling_for(runner, "", settings.cache_dir / "ceilings.json", refresh=refresh,
                               nbytes=CEILING_BYTES)
        compute = ceilings.compute_ceiling_for(settings, host.cache_key, host.name, refresh)
        return DeviceCeilings(host, host.name, copy, compute)

    def diagnosis(self) -> Rules:
        from pragma_ncu.backends.cpu.diagnosis import diagnose_cpu

        return diagnose_cpu

    def recognizes(self, kernel: KernelProfile) -> str | None:
        """perf's or cachegrind's metric names, and no ncu names."""
        from pragma_ncu.backends.cpu.diagnosis import is_cpu

        if not is_cpu(kernel):
            return None
        return "cachegrind" if "Ir" in kernel.metrics else "perf"


TARGET = CpuTarget()
