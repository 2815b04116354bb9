"""What a target is to the rest of the package: one `Target` object per target, and the
`Session` it opens for the tune loop and the search.

A target builds, runs, profiles and diagnoses kernels of one kind: `cuda` (nvcc, the GPU
worker, ncu) and `cpu` (the system compiler, the CPU worker, perf or cachegrind) are built in;
another is one folder under `backends/` plus `backends.register(TARGET)` (ARCHITECTURE.md
says how). Everything above the backends (the API, the loop, triage) looks the target up from
the spec (`backends.target_for`) or from a profile's recorded collector
(`backends.for_collector`) and never branches on its name.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pragma_ncu.backends.results import BenchReport, ProfileRun
from pragma_ncu.build import task as tasks
from pragma_ncu.diagnose.engine import Rules
from pragma_ncu.infra.bounds import Seconds, ZeroOrMore, check_bounds
from pragma_ncu.infra.errors import InputError, PragmaError
from pragma_ncu.infra.progress import Notice
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import Check
from pragma_ncu.measure.ceilings import cached_compute
from pragma_ncu.measure.roofline import ComputeRate
from pragma_ncu.pool.ceilings import DeviceCeilings
from pragma_ncu.pool.devices import GpuSelection, parse_gpus
from pragma_ncu.pool.runner import Device, Runner
from pragma_ncu.pool.workers import Slot, WorkerPool, WorkerRunner
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.search.evaluator import CompiledEvaluator, Evaluator, Phases
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.parallel import PooledEvaluator
from pragma_ncu.search.space import Point
from pragma_ncu.spec.model import ParamValue, Shape, TaskSpec
from pragma_ncu.targets.rules import SpecRules
from pragma_ncu.worker.protocol import TimingConfig


@dataclass(frozen=True)
class Profiled:
    """One profiled instance: its kernel's profile, or why there is none."""

    kernel: KernelProfile | None
    path: str = ""
    problem: str = ""
    profiler: str = ""  # the collector, and why that one where there was a choice
    resources: dict[str, float] | None = None  # the build's ptxas report (spills, stack)
    collector: str = ""  # the collector's name ("ncu", "perf", ...; "" when not recorded)


class Session(Protocol):
    """What the loop and the search use of a target, opened on one worker (or a pool)."""

    device: str
    # what a measurement's number depends on of the device: the GPU's name and driver, the
    # host's CPU and OS (the measurement cache's key: search/cache.py)
    identity: str
    ceiling_gbps: float | None
    compute: ComputeRate | None  # the compute ceiling the spec's FLOPs run on, if it has any
    # the device's measured compute ceilings (ComputeCeiling.per_second), which diagnosis
    # judges counted FLOPs against whatever the spec says: None where never measured here
    compute_ceilings: dict[str, float] | None
    limits: Limits

    def evaluator(self, spec: TaskSpec) -> Evaluator:
        """The search's evaluator for a variant's spec."""
        ...

    def check(self, spec: TaskSpec) -> str | None:
        """Compile `spec` at its defaults: None when it builds, else the error text."""
        ...

    def profile(self, spec: TaskSpec, point: Point, shape: Shape, out_dir: Path) -> Profiled:
        """Profile the instance at `point` at `shape` with the target's collector."""
        ...

    def clock(self) -> float:
        ...


@dataclass
class CompiledSession:
    """What every session whose kernels are compiled and measured in a worker does the same
    way; a target's session fills in the device facts and `make_evaluator`, `profile`. With a
    `pool`, searches measure on all its workers and everything else on its first (the
    runner is then the pool's primary)."""

    original: TaskSpec  # the user's spec: its kernel at its defaults is the reference
    settings: Settings
    runner: Runner
    pool: WorkerPool | None
    phases: Phases
    limits: Limits
    device: str = ""
    ceiling_gbps: float | None = None
    compute: ComputeRate | None = None
    compute_ceilings: dict[str, float] | None = None
    identity: str = ""

    def known_compute(self, device_key: str) -> dict[str, float] | None:
        """The device's compute ceilings: those measured for the spec's FLOPs, else those
        cached for this device (keyed by device and driver), else None."""
        if self.compute is not None:
            return self.compute.per_second
        cached = cached_compute(self.settings.cache_dir / "compute_ceilings.json", device_key)
        return cached.per_second if cached is not None else None

    def make_evaluator(self, spec: TaskSpec, runner: Runner) -> CompiledEvaluator:
        raise NotImplementedError

    def evaluator(self, spec: TaskSpec) -> Evaluator:
        if self.pool is None:
            return self.make_evaluator(spec, self.runner)
        return PooledEvaluator(self.pool,
                               lambda lane: self.make_evaluator(spec, lane.runner))  # type: ignore[arg-type]

    def check(self, spec: TaskSpec) -> str | None:
        evaluator = self.make_evaluator(spec, self.runner)
        try:
            req = tasks.build_request(spec, evaluator.arch, {},
                                      render_dir=self.settings.cache_dir / "rendered")
            built = evaluator.compile(spec, req)
        except PragmaError as exc:
            return str(exc)
        return None if built.ok else built.log or built.status

    def clock(self) -> float:
        return time.perf_counter()


@dataclass(frozen=True)
class PoolRequest:
    """Many workers at once: `--gpus` (GPUs), `--workers` (CPU worker processes), `--ray`."""

    gpus: GpuSelection | None = None
    workers: int | None = None
    ray: str | None = None

    @property
    def wanted(self) -> bool:
        return self.gpus is not None or self.workers is not None or self.ray is not None

    def options(self) -> str:
        """As the command line says it: '--gpus 0,2 --ray auto' ('' when nothing is asked)."""
        parts = [("--gpus", self.gpus.text if self.gpus is not None else None),
                 ("--workers", str(self.workers) if self.workers is not None else None),
                 ("--ray", self.ray)]
        return " ".join(f"{flag} {value}" for flag, value in parts if value is not None)

    def to_json(self) -> dict[str, Any]:
        return {"gpus": self.gpus.text if self.gpus is not None else None,
                "workers": self.workers, "ray": self.ray}

    @staticmethod
    def from_json(data: dict[str, Any] | None) -> PoolRequest:
        """What `to_json` wrote (an empty request for None: a run stored before pools were)."""
        data = data or {}
        gpus = data.get("gpus")
        return PoolRequest(parse_gpus(str(gpus)) if gpus is not None else None,
                           data.get("workers"), data.get("ray"))


@dataclass(frozen=True)
class ProfileOptions:
    """How `profile`, `explain foo.cu` and triage's kernel sides profile one instance: the
    parameters, the arch (where the target compiles for one), what to collect beyond the
    target's default (ncu's sections and metrics, source counters), where the files go, how
    long a run may take, and how many timing runs follow the profiled one."""

    params: dict[str, Any] = field(default_factory=dict)
    arch: str | None = None
    metrics: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    source: bool = False
    out_dir: Path | None = None
    timeout_s: Seconds = 180.0
    repeats: ZeroOrMore = 0

    def __post_init__(self) -> None:
        check_bounds(self)


class UsageError(InputError):
    """Options that do not go together (a GPU option for a CPU kernel, ...); `option` names
    the one at fault where there is one, so the CLI can say so (exit status 2)."""

    def __init__(self, message: str, option: str = "") -> None:
        self.option = option
        super().__init__(message)


class Target(abc.ABC):
    """One target: what it takes, how its worker runs, what its session, profiles and
    diagnosis are; the contract every target keeps, and all the rest of the package knows of
    one. Each is a single instance (`TARGET` in its `target` module), immutable (class
    attributes only: `name`, `rules` for its sources, `device_word`, `collectors`).

    A subclass must give `open` (the loop's and the search's Session) and `diagnosis` (its
    collectors' rules), and a worker: `worker_command` and `describe` (or a `runner` of its
    own). The commands of one kernel (`bench` -> BenchReport, `profile` -> ProfileRun,
    `ceilings` -> DeviceCeilings), pools and the no-device path are optional: the defaults
    say the target does not support them. What triage reads of a profile beyond the
    diagnosis (a launch's duration, what the collector's own rule results speak to) is
    `launch_duration_us` and `rule_classes`; the defaults know nothing of them."""

    name: ClassVar[str] = ""
    rules: ClassVar[SpecRules]  # the spec validator's rules for its sources
    device_word: ClassVar[str] = ""  # "GPU", "CPU": how messages name what runs its kernels
    collectors: ClassVar[tuple[str, ...]] = ()  # the collectors whose profiles it diagnoses

    def check_kernel(self, spec: TaskSpec) -> None:
        """Raise an InputError (KernelNotFound, ...) when `spec`'s source cannot hold its
        kernel, before anything is built or started; a target that cannot tell says nothing
        (its build does)."""
        return None

    # --- the worker -----------------------------------------------------------------------
    def worker_command(self, settings: Settings) -> list[str]:
        """The command that starts its worker (`worker.serve.command` with its side)."""
        raise NotImplementedError(f"{self.name} gives neither a worker command nor a runner")

    def describe(self, hello: dict[str, Any]) -> Device:
        """The device noun a worker's hello answer stands for (DeviceInfo, HostInfo, ...)."""
        raise NotImplementedError(f"{self.name} gives neither a device noun nor a runner")

    def runner(self, settings: Settings, timeout_s: float,
               env: dict[str, str] | None = None) -> Runner:
        return Runner(self.worker_command(settings), timeout_s=timeout_s, env=env,
                      describe=self.describe)

    def pool_slots(self, request: PoolRequest, settings: Settings, timeout_s: float
                   ) -> tuple[list[Slot], Callable[[Slot], WorkerRunner]]:
        """The workers a pool request asks for, and how each one starts; UsageError for
        options this target does not take."""
        raise UsageError(f"{self.name} kernels run on one worker: no --gpus, --workers, --ray")

    # --- the loop and the search ----------------------------------------------------------
    @abc.abstractmethod
    def open(self, spec: TaskSpec, settings: Settings, runner: Runner, *,
             arch: str | None = None, pool: WorkerPool | None = None,
             phases: Phases | None = None, notice: Notice = lambda _: None) -> Session:
        """Start the worker, measure what the roofline needs, and give the loop and the
        search their view of the target (`phases`: None for the target's own timing)."""

    def no_device(self, reason: str) -> PragmaError:
        """The error of a worker that did not start (`reason`: what it said)."""
        return PragmaError(f"the {self.device_word} worker did not start: {reason}")

    def without_device(self, spec: TaskSpec, settings: Settings,
                       arch: str | None) -> str | None:
        """What can be said of `spec` where the device is missing (tune's no-GPU path), or
        None when nothing can; a PragmaError when the check fails."""
        return None

    # --- the commands of one kernel (a target without one says so) -------------------------
    def bench(self, spec: TaskSpec, shapes: Sequence[Shape], settings: Settings, runner: Runner,
              *, params: dict[str, ParamValue] | None = None, arch: str | None = None,
              timing: TimingConfig | None = None, progress: Notice = lambda _: None,
              pool: WorkerPool | None = None) -> BenchReport:
        """Build once, then verify and time at each shape."""
        raise UsageError(f"bench does not run {self.name} kernels")

    def profile(self, spec: TaskSpec, shape: Shape, settings: Settings,
                options: ProfileOptions, progress: Notice = lambda _: None) -> ProfileRun:
        """Verify, time and profile one instance with the target's collector."""
        raise UsageError(f"{self.name} kernels cannot be profiled here")

    def ceilings(self, settings: Settings, refresh: bool = False) -> DeviceCeilings:
        """The device's measured ceilings (cached per device)."""
        raise UsageError(f"{self.name} has no measured ceilings")

    def checks(self, settings: Settings, profile_check: bool = True) -> list[Check]:
        """What `doctor` looks for on this machine for this target (the device, its tools,
        the counters' permission when `profile_check`), each with its fix."""
        return []

    # --- diagnosis, and what triage reads of a profile ---------------------------------------
    @abc.abstractmethod
    def diagnosis(self) -> Rules:
        """The diagnosis rules for the profiles of this target's collectors."""

    def recognizes(self, kernel: KernelProfile) -> str | None:
        """For a profile that does not record its collector (older files, a kernel built by
        hand): the collector of this target whose metrics these are, else None."""
        return None

    def launch_duration_us(self, kernel: KernelProfile) -> float | None:
        """One launch's duration as its collector measured it (µs), or None where the
        profile does not carry one (triage then needs timings beside the profile)."""
        return None

    def rule_classes(self, rule: str) -> tuple[str, ...]:
        """The bottleneck classes one of the collector's own rule results speaks to."""
        return ()


class CFamilyTarget(Target):
    """A target whose kernels are C, C++ or CUDA sources (the built-in ones): the early check
    reads the source with tree-sitter (`draft.check_kernel`) before anything is built."""

    def check_kernel(self, spec: TaskSpec) -> None:
        """KernelNotFound when the source certainly does not define the kernel."""
        from pragma_ncu.draft import check_kernel  # tree-sitter loads only for a check

        check_kernel(spec)


def ray_pool(target: Target, request: PoolRequest, settings: Settings, timeout_s: float,
             kind: str, count: int | None, cpus: int | None = None
             ) -> tuple[list[Slot], Callable[[Slot], WorkerRunner]]:
    """Workers as Ray actors (`--ray`), one GPU (kind "gpu") or one CPU ("cpu") each, serving
    `target`'s worker side (`count` None: as many as the cluster has GPUs)."""
    from pragma_ncu.pool import ray_workers

    ray = ray_workers.connect(request.ray or "auto", cpus=cpus)
    slots = ray_workers.ray_slots(ray, kind, count)
    args = tuple(target.worker_command(settings)[1:])
    return slots, lambda slot: ray_workers.RayRunner(ray, slot, cpu=kind == "cpu",
                                                     timeout_s=timeout_s,
                                                     describe=target.describe, worker_args=args)
