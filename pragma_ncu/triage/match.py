"""Pairing the kernel groups of BASE with those of NEW, across builds.

Passes, most specific first; each pairs only groups the earlier passes left over:
1. the same kernel at the same launch: equal mangled symbol, else equal demangled name (with
   template arguments), and equal launch configuration;
2. the same kernel, launch configuration changed: equal symbol, else equal name;
3. template arguments changed: the same function without template arguments (`gemm<64>` and
   `gemm<128>`), at the same launch configuration first, then at any.
Where a pass finds several candidates on a side for one key, they are paired in a fixed order:
by name with numbers compared as numbers (`relu<256>` before `relu<1024>`), then by launch
configuration; extra ones stay unpaired. Launch order never matters to these passes; each side
may launch a kernel any number of times. Groups they leave over are then paired by call site
where a library answered the same call with other kernels (`with_swaps`,
pragma_ncu.triage.callsite: the one pass that reads the launch order); the rest were added or
removed. `--match order` pairs the
groups by order of first launch instead, for builds whose names changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from pragma_ncu.triage.callsite import find_swaps
from pragma_ncu.triage.groups import KernelGroup

SAME = "same kernel"
LAUNCH_CHANGED = "launch configuration changed"
TEMPLATE_CHANGED = "template arguments changed"
BY_ORDER = "position (--match order)"
_NUMBER = re.compile(r"(\d+)")

Key = Callable[[KernelGroup], Hashable | None]


@dataclass(frozen=True)
class GroupMatch:
    """A kernel group of BASE paired with one of NEW, and what paired them. A swap (one call
    the library answered with other kernels, pragma_ncu.triage.callsite) may hold several
    groups a side: `base` and `new` are each side's costliest, the `_also` ones the others,
    and `call_samples` the call's time on each side in every place it stood (µs)."""

    base: KernelGroup
    new: KernelGroup
    how: str  # SAME, LAUNCH_CHANGED, TEMPLATE_CHANGED (+ launch), BY_ORDER, "--kernel OLD=NEW",
    #           or callsite.CALL_SITE...
    base_also: tuple[KernelGroup, ...] = ()
    new_also: tuple[KernelGroup, ...] = ()
    call_samples: tuple[tuple[float, ...], tuple[float, ...]] | None = None

    @property
    def swapped(self) -> bool:
        """The library chose other kernels for this call (paired by call site)."""
        return self.call_samples is not None

    @property
    def base_groups(self) -> tuple[KernelGroup, ...]:
        return (self.base, *self.base_also)

    @property
    def new_groups(self) -> tuple[KernelGroup, ...]:
        return (self.new, *self.new_also)

    @property
    def base_total_us(self) -> float:
        return sum(g.total_us for g in self.base_groups)

    @property
    def new_total_us(self) -> float:
        return sum(g.total_us for g in self.new_groups)

    @property
    def base_count(self) -> int:
        return sum(g.count for g in self.base_groups)

    @property
    def new_count(self) -> int:
        return sum(g.count for g in self.new_groups)


@dataclass(frozen=True)
class Matching:
    """The pairs, and the groups of each side that found no partner (removed, added)."""

    pairs: tuple[GroupMatch, ...]
    removed: tuple[KernelGroup, ...]
    added: tuple[KernelGroup, ...]


def _mangled(g: KernelGroup) -> str | None:
    return g.launches[0].mangled or None


PASSES: tuple[tuple[str, Key], ...] = (
    (SAME, lambda g: (m, g.config) if (m := _mangled(g)) else None),
    (SAME, lambda g: (g.name, g.config)),
    (LAUNCH_CHANGED, _mangled),
    (LAUNCH_CHANGED, lambda g: g.name),
    (TEMPLATE_CHANGED, lambda g: (g.base_name, g.config)),
    (f"{TEMPLATE_CHANGED}, {LAUNCH_CHANGED}", lambda g: g.base_name),
)


def match_groups(base: Sequence[KernelGroup], new: Sequence[KernelGroup]) -> Matching:
    """Pair groups by the passes of the module docstring."""
    left_b, left_n = list(base), list(new)
    pairs: list[GroupMatch] = []
    for how, key in PASSES:
        found = _pair_by(left_b, left_n, how, key)
        pairs += found
        paired = {id(p.base) for p in found} | {id(p.new) for p in found}
        left_b = [g for g in left_b if id(g) not in paired]
        left_n = [g for g in left_n if id(g) not in paired]
    pairs.sort(key=lambda p: (p.base.first_index, p.new.first_index))
    return Matching(tuple(pairs), tuple(left_b), tuple(left_n))


def with_swaps(matching: Matching) -> Matching:
    """The groups left over by the name passes paired by call site where they are one call
    the library answered with other kernels (pragma_ncu.triage.callsite)."""
    swaps = find_swaps([(p.base, p.new) for p in matching.pairs], matching.removed,
                       matching.added)
    if not swaps:
        return matching
    pairs = [GroupMatch(s.base[0], s.new[0], s.how, s.base[1:], s.new[1:],
                        (s.base_samples, s.new_samples)) for s in swaps]
    swapped = {id(g) for s in swaps for g in (*s.base, *s.new)}
    return Matching(matching.pairs + tuple(pairs),
                    tuple(g for g in matching.removed if id(g) not in swapped),
                    tuple(g for g in matching.added if id(g) not in swapped))


def match_by_order(base: Sequence[KernelGroup], new: Sequence[KernelGroup],
                   how: str = BY_ORDER) -> Matching:
    """Pair the i-th group of BASE with the i-th of NEW (by first launch), whatever their
    names."""
    b = sorted(base, key=lambda g: g.first_index)
    n = sorted(new, key=lambda g: g.first_index)
    count = min(len(b), len(n))
    pairs = tuple(GroupMatch(x, y, how) for x, y in zip(b[:count], n[:count], strict=True))
    return Matching(pairs, tuple(b[count:]), tuple(n[count:]))


def natural(name: str) -> tuple[tuple[int, str], ...]:
    """A sort key comparing the numbers in a name as numbers: gemm<64> before gemm<128>."""
    return tuple((int(part), "") if part.isdigit() else (0, part)
                 for part in _NUMBER.split(name) if part)


def _pair_by(base: list[KernelGroup], new: list[KernelGroup], how: str, key: Key
             ) -> list[GroupMatch]:
    def by_key(groups: list[KernelGroup]) -> dict[Hashable, list[KernelGroup]]:
        out: dict[Hashable, list[KernelGroup]] = {}
        for g in groups:
            k = key(g)
            if k is not None:
                out.setdefault(k, []).append(g)
        return out

    kb, kn = by_key(base), by_key(new)
    pairs = []
    for k in kb.keys() & kn.keys():
        order = sorted(kb[k], key=_order), sorted(kn[k], key=_order)
        pairs += [GroupMatch(b, n, how) for b, n in zip(*order, strict=False)]
    return pairs


def _order(g: KernelGroup) -> tuple[object, ...]:
    return (natural(g.name), g.config.label(), g.signature)
