"""The backends' registry: target name -> `Target` (see `base`), and the diagnosis of a profile
by the rules of the target that owns its collector.

Built-in targets are folders of this package, each with a `target` module holding `TARGET`,
imported on first use (`targets.BUILTIN` lists them: a new built-in target is one folder
here and its name and spec rules there). A target from outside the package (a plug-in, a
test's) is handed to `register`.

Only that list is imported at module level, so that modules of a backend's lower layers (a
worker side, the C types of `cpu.abi`) import as lightly as they did outside this package.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from pragma_ncu.targets import BUILTIN

if TYPE_CHECKING:
    from pragma_ncu.backends.base import Target
    from pragma_ncu.diagnose.cite import Knowledge
    from pragma_ncu.diagnose.findings import Diagnosis
    from pragma_ncu.profile.profiles import KernelProfile, Profile
    from pragma_ncu.spec.model import TaskSpec

# Readers of profile files older than the recorded collector, and the collector each one read.
LEGACY_READERS = {"ncu_report": "ncu", "csv": "ncu", "perf": "perf", "cachegrind": "cachegrind"}
_registered: dict[str, Target] = {}


def register(target: Target) -> None:
    """Make `target` known by its name (replacing one of that name) and its sources known to
    the spec validator."""
    from pragma_ncu.spec.model import register_rules

    _registered[target.name] = target
    register_rules(target.rules)


def unregister(name: str) -> None:
    """Forget a registered target and its sources (a plug-in's tests undo their `register`);
    a built-in one is found again on the next `get`."""
    from pragma_ncu.spec.model import unregister_rules

    _registered.pop(name, None)
    unregister_rules(name)


def get(name: str) -> Target:
    """The target called `name`; KeyError names the known ones."""
    if name in _registered:
        return _registered[name]
    if name in BUILTIN:
        target: Target = importlib.import_module(f"{__name__}.{name}.target").TARGET
        _registered.setdefault(name, target)
        return _registered[name]
    raise KeyError(f"no target {name!r}; known: {', '.join(names())}")


def names() -> tuple[str, ...]:
    return tuple(dict.fromkeys((*BUILTIN, *_registered)))


def targets() -> tuple[Target, ...]:
    return tuple(get(name) for name in names())


def target_for(spec: TaskSpec | Path) -> Target:
    """The target that builds and runs a spec's kernel (or a source file)."""
    from pragma_ncu.spec.model import target_of

    return get(spec.target if not isinstance(spec, Path) else target_of(spec))


def for_collector(collector: str) -> Target:
    """The target whose diagnosis rules read the profiles of `collector`."""
    found = next((t for t in targets() if collector in t.collectors), None)
    if found is None:
        raise KeyError(f"no target diagnoses profiles collected by {collector!r}")
    return found


def collector_of(profile: Profile) -> str:
    """The collector that measured `profile`: recorded in it, else inferred (once, here, the
    one place that reads metric names for it) for files written before it was: from the
    reader that read it, then from the collection's notes, then from the first kernel's
    metrics (the first target, the default last, whose `recognizes` claims them)."""
    if profile.collector:
        return profile.collector
    if profile.reader in LEGACY_READERS:
        return LEGACY_READERS[profile.reader]
    noted = profile.collection.get("collector")
    if isinstance(noted, str) and noted:
        return noted
    if profile.kernels:
        for target in sorted(targets(), key=lambda t: t.name == BUILTIN[0]):
            found = target.recognizes(profile.kernels[0])
            if found:
                return found
    return default().collectors[0]


def default() -> Target:
    """The default target (the first built-in one): what a source of no target's suffix is,
    and what reads a profile that says nothing of its collector."""
    return get(BUILTIN[0])


def diagnose(kernel: KernelProfile, knowledge: Knowledge, ceiling_gbps: float | None = None,
             source_file: str | None = None, resources: dict[str, float] | None = None,
             compute: dict[str, float] | None = None, *, collector: str) -> Diagnosis:
    """One kernel's diagnosis by the rules of `collector`, the collector that measured it
    (`Profiled.collector`, `Profile.collector`: always recorded where the profile is taken);
    `compute` the device's compute ceilings (ComputeCeiling.per_second)."""
    rules = for_collector(collector).diagnosis()
    return rules(kernel, knowledge, ceiling_gbps, source_file, resources, compute)


def diagnose_in(profile: Profile, kernel: KernelProfile, knowledge: Knowledge,
                ceiling_gbps: float | None = None,
                compute: dict[str, float] | None = None) -> Diagnosis:
    """A kernel of `profile` diagnosed by the rules of the profile's collector, with what its
    collection recorded (ceilings, source file, the build's resources)."""
    from pragma_ncu.diagnose.engine import diagnose_in as with_rules

    rules = for_collector(collector_of(profile)).diagnosis()
    return with_rules(rules, profile, kernel, knowledge, ceiling_gbps, compute)
