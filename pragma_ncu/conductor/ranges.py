"""Extending a knob's range past its edge, in one round.

A power-of-two knob whose best value is the top (or bottom) of its declared range may do better
still beyond it. The range is extended at once to every power of two the device and the spec
allow in that direction, not one step a round: on a naive layer norm one halving a round
(32 -> 16 -> 8 -> 4 -> 2) spent all five rounds, each with its full re-test and profile, and never
reached a source move. How far a knob may go (`reach`) is the loop's to measure with the
search's own feasibility check; what to try (`edge_move`) is decided here. A range extended once
in a direction is not extended that way again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pragma_ncu.coder.moves.base import KNOB_PREFIX
from pragma_ncu.measure.records import RangeChange
from pragma_ncu.search import feasibility
from pragma_ncu.spec import expr
from pragma_ncu.spec.model import Param, ParamValue, Shape, TaskSpec

UP, DOWN = "up", "down"
BEYOND_TOP = 8  # a knob other than the block size goes up to this many times its range's top
MAX_THREADS_PER_BLOCK = 1024  # every architecture since sm_30 (where no device is known)


def powers_of_two(p: Param) -> list[int] | None:
    """The knob's values when it is a declared power-of-two integer knob of two or more values
    (not a flag, not a source move's knob, whose move chose its range from the hardware)."""
    values = [v for v in p.values if isinstance(v, int) and not isinstance(v, bool)]
    if p.flag or p.name.startswith(KNOB_PREFIX) or len(values) < 2 or \
            len(values) != len(p.values):
        return None
    return values if all(v > 0 and v & (v - 1) == 0 for v in values) else None


def candidates(p: Param, block: bool, max_threads: int = MAX_THREADS_PER_BLOCK) -> list[int]:
    """Every power of two a knob might take beyond its range, unchecked: down to 1, and up to
    the device's threads per block for a knob of the block size, else BEYOND_TOP times its
    range's top."""
    values = powers_of_two(p)
    if values is None:
        return []
    top = max_threads if block else BEYOND_TOP * max(values)
    below = [1 << i for i in range(min(values).bit_length() - 1)]
    above = [1 << i for i in range(max(values).bit_length(), top.bit_length())
             if 1 << i <= top]
    return [*below, *above]


def reach(spec: TaskSpec, point: Mapping[str, ParamValue], shapes: Sequence[Shape],
          limits: feasibility.Limits) -> dict[str, tuple[int, ...]]:
    """For each power-of-two knob of `spec`: the values beyond its range that the device and
    the spec allow it, the other parameters at `point` (the search's own pre-compile check,
    restrictions included, at every shape)."""
    block_names = {n for text in spec.launch.block for n in expr.names(text)}
    out: dict[str, tuple[int, ...]] = {}
    for p in spec.params:
        wanted = candidates(p, p.name in block_names, limits.max_threads_per_block)
        out[p.name] = tuple(v for v in wanted if feasibility.check_point(
            spec, {**point, p.name: v}, shapes, limits) is None)
    return out


def direction(change: RangeChange) -> str | None:
    """Which way a re-tune extended a knob's range (None: it added a knob, or did neither)."""
    old = [v for v in change.old if isinstance(v, int | float) and not isinstance(v, bool)]
    new = [v for v in change.new if isinstance(v, int | float) and not isinstance(v, bool)]
    if not old or not new:
        return None
    return UP if max(new) > max(old) else DOWN if min(new) < min(old) else None


def extended(history: Iterable[RangeChange]) -> set[tuple[str, str]]:
    """(knob, direction) of every range extended so far."""
    return {(c.param, way) for c in history if (way := direction(c)) is not None}


def edge_move(p: Param, value: object, allowed: Sequence[int] | None,
              done: set[tuple[str, str]]) -> RangeChange | None:
    """A power-of-two knob whose best value is the top (or bottom) of its range: extend it to
    every value `allowed` beyond that edge (None: every candidate, unchecked), and keep the
    neighbourhood of the best; None when there is nothing to add or the range was extended
    that way before."""
    values = powers_of_two(p)
    if values is None or not isinstance(value, int) or isinstance(value, bool):
        return None
    beyond = candidates(p, False) if allowed is None else list(allowed)
    near = [v for v in sorted(values) if value // 4 <= v <= value * 4]
    if value == max(values) and (p.name, UP) not in done:
        added = [v for v in beyond if v > value]
        new, where, way = (*near, *added), "top", "above"
    elif value == min(values) and (p.name, DOWN) not in done:
        added = [v for v in beyond if v < value]
        new, where, way = (*added, *near), "bottom", "below"
    else:
        return None
    if not added:
        return None
    return RangeChange(p.name, tuple(p.values), tuple(new),
                       f"the best {p.name}={value} is at the {where} of its range: try "
                       f"{', '.join(map(str, added))} (every power of two {way} it that the "
                       "device and the spec allow)")
