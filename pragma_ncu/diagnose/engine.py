"""Diagnosis by rules: one kernel's profile -> a Diagnosis with ranked findings, each citing
the compendium entries of the metrics it rests on.

The rules belong to the collector that measured the profile: ncu's are the CUDA target's
(`pragma_ncu.backends.cuda.diagnosis`), perf's and cachegrind's the CPU target's
(`pragma_ncu.backends.cpu.diagnosis`). `pragma_ncu.backends.diagnose` picks them from the
profile's recorded collector; here is what every rule set is given and what it returns.
"""

from __future__ import annotations

from typing import Protocol

from pragma_ncu.diagnose.cite import Knowledge
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.profile.profiles import KernelProfile, Profile


class Rules(Protocol):
    """A collector's diagnosis rules. `ceiling_gbps` is the device's measured copy ceiling;
    `source_file` the kernel's source (for hot lines); `resources` the build's own report of
    its resources (spills, stack), which a user's report lacks; `compute` the device's measured
    compute ceilings (ComputeCeiling.per_second), for the attainable roofline. Rules use what
    applies to them."""

    def __call__(self, kernel: KernelProfile, knowledge: Knowledge,
                 ceiling_gbps: float | None = None, source_file: str | None = None,
                 resources: dict[str, float] | None = None,
                 compute: dict[str, float] | None = None) -> Diagnosis: ...


def diagnose_in(rules: Rules, profile: Profile, kernel: KernelProfile, knowledge: Knowledge,
                ceiling_gbps: float | None = None,
                compute: dict[str, float] | None = None) -> Diagnosis:
    """`rules` applied with what the profile's collection recorded: the copy ceiling (unless
    `ceiling_gbps` is given), the compute ceilings, the kernel's source file and its build's
    resources."""
    info = profile.collection
    resources = info.get("resources") if isinstance(info.get("resources"), dict) else None
    if compute is None and isinstance(info.get("compute"), dict):
        compute = info["compute"]
    return rules(kernel, knowledge, ceiling_gbps or info.get("ceiling_gbps"),
                 info.get("source_file"), resources, compute)
