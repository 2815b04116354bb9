"""Pairing by call site: the kernels a library swapped for one call.

After the name passes (pragma_ncu.triage.match), a group left on BASE and one left on NEW may
still be the same call answered by another kernel: cuBLAS choosing another GEMM for a new
layout, cub replacing CuPy's own reduction, cuFFT another algorithm for an odd length. Names
cannot pair them; their place in the launch stream can.

1. Anchors: every launch of a name-paired group, labelled by its pair. The two sides' anchor
   sequences are aligned (difflib's longest matching blocks), so a reordering of the kernels
   in between moves nothing.
2. Slots: the leftover launches between two consecutive aligned anchors stand at the same place
   on both sides. A slot is one occurrence of the calls made there.
3. Calls: within a slot, the leftover groups of each side are split by what they do, read from
   their names (pragma_ncu.profile.kernel_names: a GEMM, a reduction, a copy or cast, an FFT,
   a softmax...) and, inside a family, by the operation they name (sum, max...). One family on
   both sides is one call, answered by one or more kernels on each side. A slot holding one
   leftover group a side is one call unless their families differ (a GEMM gone and a copy
   come are two changes).
   Anything else stays apart: position alone never pairs two groups of a slot that holds
   several, since two calls that trade places would pair crosswise.
4. Consistency: calls that share a group are one (cuFFT answers a forward and an inverse
   transform with the same kernels); a call is a swap when the slots it formed in hold more
   than SWAP_COVERAGE of the launches of each of its groups, and formed in two places or more
   (the iterations of a loop) unless all its kernels' names say one family.

The call's time on each side is the sum of its kernels' launches in one slot: one sample per
occurrence, the samples the verdict compares (compare.call_change).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from pragma_ncu.profile.kernel_names import family, operations
from pragma_ncu.triage.groups import KernelGroup

CALL_SITE = "call site"
SWAP_COVERAGE = 0.5  # the share of each group's launches that must stand where the call formed
# A call whose kernels' names do not all say what they do must form in this many places (the
# iterations of a loop) before position alone pairs it; one place is enough where they agree.
MIN_PLACES_UNNAMED = 2


@dataclass(frozen=True)
class Swap:
    """One call answered by other kernels: BASE's groups and NEW's, the time of the call in
    each slot it formed in (µs, one sample per occurrence), and what paired them."""

    base: tuple[KernelGroup, ...]
    new: tuple[KernelGroup, ...]
    base_samples: tuple[float, ...]
    new_samples: tuple[float, ...]
    how: str


Call = tuple[frozenset[int], frozenset[int]]  # (BASE group ids, NEW group ids) of one call


@dataclass(frozen=True)
class _Launch:
    group: int  # index into the side's groups
    index: int  # report order
    duration: float | None


def find_swaps(paired: Sequence[tuple[KernelGroup, KernelGroup]],
               removed: Sequence[KernelGroup], added: Sequence[KernelGroup]) -> list[Swap]:
    """The swaps among the groups left over on each side (`removed`, `added`), placed by the
    name-paired groups (`paired`) as anchors. See the module docstring."""
    if not removed or not added or not paired:
        return []  # with no kernel in common, no place is known to be the same
    aligned_b, aligned_n = _aligned_anchors(paired)
    base_slots, new_slots = _slots(removed, aligned_b), _slots(added, aligned_n)
    formed: dict[Call, set[int]] = defaultdict(set)
    for slot in sorted(base_slots.keys() & new_slots.keys()):
        ids_b, ids_n = _distinct(base_slots[slot]), _distinct(new_slots[slot])
        for call in _calls([removed[i] for i in ids_b], ids_b, [added[i] for i in ids_n],
                           ids_n):
            formed[call].add(slot)
    where_b, where_n = _where(base_slots), _where(new_slots)
    swaps = []
    for call_b, call_n, slots in _merged(formed):
        if not (_covered(call_b, where_b, slots) and _covered(call_n, where_n, slots)):
            continue
        base = tuple(sorted((removed[i] for i in call_b), key=lambda g: -g.total_us))
        new = tuple(sorted((added[i] for i in call_n), key=lambda g: -g.total_us))
        if len(slots) < MIN_PLACES_UNNAMED and _one_family(base + new) is None:
            continue
        samples_b, samples_n = (_samples(call_b, base_slots, slots),
                                _samples(call_n, new_slots, slots))
        if min(samples_b + samples_n) <= 0:
            continue  # launches without a duration (a CPU collector's): no call time to judge
        times = "once" if len(slots) == 1 else f"{len(slots)} times"
        swaps.append(Swap(base, new, samples_b, samples_n,
                          f"{CALL_SITE}: at the same place in the launch order {times}"
                          + _kind_words(base + new)))
    return sorted(swaps, key=lambda s: min(g.first_index for g in s.base))


def _slots(leftovers: Sequence[KernelGroup], aligned: list[int]) -> dict[int, list[_Launch]]:
    """Each leftover launch of one side by its slot: the number of aligned anchors before it."""
    launches = sorted((_Launch(gi, k.index, d) for gi, g in enumerate(leftovers)
                       for k, d in zip(g.launches, g.durations, strict=True)),
                      key=lambda x: x.index)
    out: dict[int, list[_Launch]] = defaultdict(list)
    for launch in launches:
        out[bisect_left(aligned, launch.index)].append(launch)
    return out


def _aligned_anchors(paired: Sequence[tuple[KernelGroup, KernelGroup]]
                     ) -> tuple[list[int], list[int]]:
    """The report indices of the anchors aligned across the sides, in order (the same length
    on both sides: the i-th of one stands where the i-th of the other does)."""
    sequences: list[list[tuple[int, int]]] = [[], []]  # (report index, pair) per side
    for pair, groups in enumerate(paired):
        for side, group in enumerate(groups):
            sequences[side] += [(k.index, pair) for k in group.launches]
    b, n = (sorted(s) for s in sequences)
    matcher = SequenceMatcher(None, [p for _, p in b], [p for _, p in n], autojunk=False)
    out_b: list[int] = []
    out_n: list[int] = []
    for block in matcher.get_matching_blocks():
        out_b += [index for index, _ in b[block.a: block.a + block.size]]
        out_n += [index for index, _ in n[block.b: block.b + block.size]]
    return out_b, out_n


def _distinct(launches: Iterable[_Launch]) -> list[int]:
    return list(dict.fromkeys(x.group for x in launches))


def _calls(base: list[KernelGroup], base_ids: list[int], new: list[KernelGroup],
           new_ids: list[int]) -> list[Call]:
    """The calls of one slot: (BASE group ids, NEW group ids) that answer one call."""
    fam_b = [family(g.name) for g in base]
    fam_n = [family(g.name) for g in new]
    if len(base) == len(new) == 1:
        if fam_b[0] is not None and fam_n[0] is not None and fam_b[0] != fam_n[0]:
            return []
        return [(frozenset(base_ids), frozenset(new_ids))]
    calls = []
    for fam in dict.fromkeys(f for f in fam_b if f is not None and f in fam_n):
        b = [i for i, f in enumerate(fam_b) if f == fam]
        n = [i for i, f in enumerate(fam_n) if f == fam]
        for call_b, call_n in _split_family([base[i] for i in b], [new[i] for i in n]):
            calls.append((frozenset(base_ids[b[i]] for i in call_b),
                          frozenset(new_ids[n[i]] for i in call_n)))
    return calls


def _split_family(base: list[KernelGroup], new: list[KernelGroup]
                  ) -> list[tuple[list[int], list[int]]]:
    """One family's groups of a slot as calls: all of them one call where a side holds one
    group; else split by the operation their names share, each operation one call where both
    sides name it (and nothing else); groups naming none stay apart."""
    if len(base) == 1 or len(new) == 1:
        return [(list(range(len(base))), list(range(len(new))))]
    ops_b = [operations(g.name) for g in base]
    ops_n = [operations(g.name) for g in new]
    calls = []
    for op in sorted({o for ops in ops_b for o in ops} & {o for ops in ops_n for o in ops}):
        b = [i for i, ops in enumerate(ops_b) if ops == {op}]
        n = [i for i, ops in enumerate(ops_n) if ops == {op}]
        if b and n:
            calls.append((b, n))
    return calls


def _merged(formed: dict[Call, set[int]]) -> list[tuple[set[int], set[int], set[int]]]:
    """The calls, those sharing a group merged into one (cuFFT answers a forward and an
    inverse transform with the same new kernels): (BASE ids, NEW ids, slots)."""
    merged: list[tuple[set[int], set[int], set[int]]] = []
    for (call_b, call_n), slots in formed.items():
        into = (set(call_b), set(call_n), set(slots))
        for m in [m for m in merged if m[0] & call_b or m[1] & call_n]:
            merged.remove(m)
            for mine, theirs in zip(into, m, strict=True):
                mine.update(theirs)
        merged.append(into)
    return merged


def _where(side_slots: dict[int, list[_Launch]]) -> dict[int, list[int]]:
    """Each group's launches by the slot they stand in (a slot once per launch)."""
    out: dict[int, list[int]] = defaultdict(list)
    for slot, launches in side_slots.items():
        for x in launches:
            out[x.group].append(slot)
    return out


def _covered(call: set[int], where: dict[int, list[int]], slots: set[int]) -> bool:
    """More than SWAP_COVERAGE of every group's launches stand in the call's slots."""
    return all(sum(slot in slots for slot in where[g]) > SWAP_COVERAGE * len(where[g])
               for g in call)


def _samples(call: set[int], side_slots: dict[int, list[_Launch]], slots: set[int]
             ) -> tuple[float, ...]:
    """The call's time in each of its slots (µs): its groups' launches there, summed."""
    return tuple(sum(x.duration or 0.0 for x in side_slots[slot] if x.group in call)
                 for slot in sorted(slots))


def _one_family(groups: Sequence[KernelGroup]) -> str | None:
    """The family every group's name says it belongs to, if they say one."""
    kinds = {family(g.name) for g in groups}
    return kinds.pop() if len(kinds) == 1 else None


def _kind_words(groups: Sequence[KernelGroup]) -> str:
    kind = _one_family(groups)
    return f", both {PLURALS.get(kind, kind)}" if kind else ""


PLURALS = {"gemm": "GEMMs", "fft": "FFTs", "softmax": "softmaxes", "norm": "normalizations",
           "conv": "convolutions", "sort": "sorts", "scan": "scans", "copy": "copies or casts",
           "fill": "fills", "reduce": "reductions", "elementwise": "element-wise kernels",
           "attention": "attention kernels", "random": "random generators"}
