"""What this machine can do, as library calls: `doctor` (each target's checks of its device and
tools, with fixes) and `ceilings` (a target's measured roofline ceilings)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pragma_ncu import backends
from pragma_ncu.api.arguments import checked
from pragma_ncu.api.common import settings_or_default
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import Check
from pragma_ncu.knowledge.compendium import load_compendium
from pragma_ncu.measure.ceilings import datasheet_for
from pragma_ncu.pool.ceilings import DeviceCeilings


@dataclass(frozen=True)
class Doctor:
    """What `doctor` found: every target's checks, in the registry's order."""

    checks: tuple[Check, ...]

    @property
    def missing(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.ok)


@checked
def doctor(*, profile_check: bool = True, settings: Settings | None = None) -> Doctor:
    """Check what this machine has for building, running and profiling kernels, target by
    target (CUDA: cuda-python, the GPU and driver, nvcc, ncu, ncu_report and, with
    `profile_check`, the permission to read the GPU's counters by a short ncu run; CPU: the C
    and C++ compilers, perf and, with `profile_check`, whether it reads the CPU's counters,
    and valgrind)."""
    settings = settings_or_default(settings)
    return Doctor(tuple(c for target in backends.targets()
                        for c in target.checks(settings, profile_check)))


@dataclass(frozen=True)
class Ceilings:
    """What `ceilings` measured (or found cached), with the datasheet's figures of a GPU the
    knowledge lists ({} otherwise)."""

    measured: DeviceCeilings
    datasheet: dict[str, float] = field(default_factory=dict)


@checked
def ceilings(target: str = "cuda", *, refresh: bool = False,
             settings: Settings | None = None) -> Ceilings:
    """A target's ceilings for the roofline, measured once and cached: the GPU's copy
    bandwidth and compute rates (target "cuda"), or this host's (target "cpu")."""
    settings = settings_or_default(settings)
    measured: DeviceCeilings = backends.get(target).ceilings(settings, refresh)
    return Ceilings(measured, datasheet_for(measured.name, load_compendium(settings)))
