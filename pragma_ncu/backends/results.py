"""What the commands of one kernel return, for every target alike: `BenchReport` (`bench`: the
build, then each shape verified and timed) and `ProfileRun` (`profile`: one instance verified,
timed and profiled by the target's collector). Each target fills them in; the API returns them
and report/ renders them without asking which target made them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pragma_ncu.build.compile import BuildResult
from pragma_ncu.infra.errors import PragmaError
from pragma_ncu.measure.ceilings import Ceiling, ComputeCeiling
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.measure.stats import TimingStats
from pragma_ncu.pool.runner import Device
from pragma_ncu.profile.profiles import Profile
from pragma_ncu.spec.model import ParamValue, ResolvedTask, Shape, TaskSpec


@dataclass(frozen=True)
class BenchRow:
    shape: Shape
    task: ResolvedTask
    measurement: Measurement
    device: str = ""  # the worker that measured it, with many (gpu0, gpu1, ...)


@dataclass(frozen=True)
class BenchReport:
    """`bench`: the build, the device (None where it did not open: `no_device_reason` says
    why, after compiling), the ceilings the roofline stands on, and a row per shape."""

    spec: TaskSpec
    params: dict[str, ParamValue]
    build: BuildResult
    device: Device | None
    no_device_reason: str | None
    ceiling: Ceiling | None
    rows: tuple[BenchRow, ...]
    compute: ComputeCeiling | None = None  # measured when the spec counts FLOPs

    @property
    def all_verified(self) -> bool:
        return bool(self.rows) and all(r.measurement.status is Status.OK for r in self.rows)


@dataclass(frozen=True)
class CollectorRun:
    """How the collector's own process ran on the instance, where it runs as one (ncu):
    its outcome, its message, its time and the files it left."""

    status: str
    message: str = ""
    wall_s: float = 0.0
    report: Path | None = None
    log: Path | None = None
    command: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProfileRun:
    """`profile`: one instance verified, timed and profiled. `profile` is None when a step
    before it failed: `problem` says which and why, `failure` what kind of error that is
    (the kernel's, KernelFailure, or the environment's, ToolchainError)."""

    spec: TaskSpec
    shape: Shape
    params: dict[str, ParamValue]
    collector: str  # the collector that profiled it (or was to)
    collector_note: str = ""  # why that one, or what its counts are ("simulated: ...")
    build: BuildResult | None = None
    device: Device | None = None
    ceiling: Ceiling | None = None
    measurements: tuple[Measurement, ...] = ()  # the verified run profiled, then repeats
    collection: CollectorRun | None = None
    profile: Profile | None = None
    profile_path: Path | None = None
    problem: str = ""
    failure: type[PragmaError] | None = None
    key_metrics: tuple[tuple[str, str], ...] = ()  # (label, metric) a summary shows first

    @property
    def measurement(self) -> Measurement | None:
        """The verify-and-time run of the instance profiled."""
        return self.measurements[0] if self.measurements else None

    @property
    def timings(self) -> tuple[TimingStats, ...]:
        """Every timing of the profiled instance: the verified run's, then the repeats'."""
        return tuple(m.timing for m in self.measurements if m.timing is not None)

    @property
    def device_name(self) -> str | None:
        return self.device.name if self.device is not None else None

    def failure_kind(self) -> type[PragmaError] | None:
        """What kind of error stopped the run before its profile; None: it was profiled."""
        return None if self.profile is not None else self.failure

    def note(self) -> str:
        """What was done, for a triage side measured now."""
        return (f"verified, timed and profiled ({self.collector}) now at {self.shape.name}"
                + (f" on {self.device_name}" if self.device_name else ""))
