"""`explain` on an application: where the GPU time goes, and what fixing each kernel would buy.

The launches are grouped by kernel with triage's grouping (pragma_ncu.triage.groups: the full
signature with template arguments, at one launch configuration). Each group is diagnosed once,
on its median launch (the only full profile read of it), and gets an estimated saving: its GPU
time times its headroom to the attainable roofline, `1 - f` where `f` is the time the kernel
cannot beat doing the same work over its measured time (Roofline.attainable_fraction: bytes at
the copy ceiling, FLOPs at the compute ceiling, a pipe's work at its peak). The fraction is the
median launch's, applied to every launch of the group: launches of one kernel at one
configuration do the same work, so their time at the roofline scales with their time. Groups
rank by that saving (then by GPU time); a group whose report carries none of those figures has
no estimate and ranks after the ones that do, by GPU time. The application's time if a group
reached its roofline is Amdahl's: the total less that group's saving.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pragma_ncu import backends
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.infra.errors import DraftError, InputError
from pragma_ncu.profile.launches import Launches
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.syntax.facts import parse_source
from pragma_ncu.syntax.tree import language_of
from pragma_ncu.triage.groups import KernelGroup, group_launches

SOURCE_SUFFIXES = (".cu", ".cuh")
MAX_SOURCES = 2000  # files parsed when looking for where kernels are defined


@dataclass(frozen=True)
class GroupExplanation:
    """One kernel group of an application: its launches, its median launch's full profile and
    diagnosis, and what reaching its roofline would save."""

    group: KernelGroup
    kernel: KernelProfile  # the launch nearest the group's median duration, read in full
    diagnosis: Diagnosis
    source: Path | None = None  # the file that defines the kernel, when one was found
    source_line: int | None = None  # the line of its definition there

    @property
    def total_us(self) -> float:
        return self.group.total_us

    @property
    def reached(self) -> float | None:
        """The attainable fraction of the roofline (1.0 = at it), None when unknown."""
        return self.diagnosis.roofline.attainable_fraction

    @property
    def saving_us(self) -> float | None:
        """GPU time saved if every launch of the group ran at its roofline."""
        return None if self.reached is None else self.total_us * (1.0 - self.reached)

    def tune_commands(self) -> tuple[str, ...]:
        """How to hand the kernel to `init` and `tune` (its source must be known): a spec of
        its own, NAME.toml, since a file of many kernels needs one spec per kernel."""
        if self.source is None:
            return ()
        name = self.group.base_name.rsplit("::", 1)[-1]
        spec = f"{name}.toml"  # in the current folder: init writes it, tune reads it
        return (f"pragma-ncu init {self.source} --kernel {name} --spec {spec}",
                f"pragma-ncu tune --kernel {self.source} --spec {spec}")


@dataclass(frozen=True)
class Application:
    """An application report explained: every launch's GPU time, and the kernel groups shown
    (all of them, or those `--kernel` chose) ranked by estimated saving."""

    total_us: float  # the sum of every launch's duration
    launches: int
    group_count: int  # groups in the whole report
    groups: tuple[GroupExplanation, ...]

    def share(self, group: GroupExplanation) -> float:
        return group.total_us / self.total_us if self.total_us else 0.0

    def after_us(self, group: GroupExplanation) -> float | None:
        """The application's GPU time if this group alone reached its roofline (Amdahl)."""
        saving = group.saving_us
        return None if saving is None else self.total_us - saving

    @property
    def unknown(self) -> tuple[GroupExplanation, ...]:
        """The groups whose report shows no ceiling to judge them by."""
        return tuple(g for g in self.groups if g.reached is None)


Diagnose = Callable[[KernelProfile], Diagnosis]


def explain_application(launches: Launches, diagnose: Diagnose, kernel: str | None = None,
                        source_roots: Sequence[Path] = ()) -> Application:
    """Group the launches, diagnose each group's median launch (those of the groups whose
    name contains `kernel`, when given), rank them by estimated saving, and find where each
    kernel is defined among the sources under `source_roots`."""
    reader = backends.for_collector(backends.collector_of(launches.profile))
    groups = group_launches(launches.profile.kernels, reader.launch_duration_us)
    chosen = [g for g in groups if kernel is None or matches(g.launches[0], kernel)]
    if kernel is not None and not chosen:
        raise no_match(kernel, [g.name for g in groups])
    medians = [g.representative().index for g in chosen]
    full = launches.full(medians)
    sources = find_definitions({_function(g) for g in chosen}, source_roots)
    explained = [GroupExplanation(g, full[i], diagnose(full[i]),
                                  *sources.get(_function(g), (None, None)))
                 for g, i in zip(chosen, medians, strict=True)]
    explained.sort(key=_rank_key)
    return Application(sum(g.total_us for g in groups), len(launches.profile.kernels),
                       len(groups), tuple(explained))


def _rank_key(g: GroupExplanation) -> tuple[bool, float, float, int]:
    saving = g.saving_us
    return (saving is None, -(saving or 0.0), -g.total_us, g.group.first_index)


def matches(kernel: KernelProfile, name: str) -> bool:
    """`--kernel NAME`'s rule: the kernel's name, symbol or signature, or part of its
    signature."""
    return name in (kernel.name, kernel.mangled, kernel.display_name) or \
        name in (kernel.display_name or kernel.name)


def no_match(name: str, names: Iterable[str]) -> InputError:
    """The error for a `--kernel NAME` no kernel matches, naming those there are."""
    return InputError(f"no kernel matches {name!r}; the report holds: "
                       f"{', '.join(sorted(set(names)))}")


def _function(group: KernelGroup) -> str:
    """The kernel's function name as its source declares it: no namespace, no template."""
    return group.base_name.rsplit("::", 1)[-1]


def find_definitions(names: Iterable[str], roots: Sequence[Path]
                     ) -> dict[str, tuple[Path, int]]:
    """function name -> (the first CUDA source under `roots` (files, or folders searched
    recursively) that defines a `__global__` function of that name, the line)."""
    wanted: set[str] = set(names)
    found: dict[str, tuple[Path, int]] = {}
    for path in _sources(roots):
        if not wanted - found.keys():
            break
        try:
            facts = parse_source(path.read_text(errors="replace"), language_of(path.suffix))
        except (OSError, DraftError):
            continue
        for fn in facts.functions:
            if fn.is_global and fn.name in wanted and fn.name not in found:
                found[fn.name] = (path, fn.line)
    return found


def _sources(roots: Sequence[Path]) -> Iterable[Path]:
    count = 0
    for root in roots:
        files = ([root] if root.is_file() else
                 sorted(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES)
                 if root.is_dir() else [])
        for path in files:
            if path.suffix in SOURCE_SUFFIXES and count < MAX_SOURCES:
                count += 1
                yield path
