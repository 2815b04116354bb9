"""A tune run's time: the whole run's budget (`--max-time`), what a round costs, the share of
it each round's search gets, and the shorter re-tests of a long launch.

A run spends its time in the baseline (build, re-test, profile), then per round in the search
(compiles and short measurements), the search's re-test of its top candidates, the side-by-side
re-test against the historical best and the profile. Only the search can be given less time
and still do its job (it measures fewer points); the rest is what a round costs whatever it
searched (its *fixed* part). So:

- the conductor stops when the time left cannot hold another round: the fixed part of a round
  (measured in the rounds so far; before any, modelled from the baseline's re-test and profile)
  plus a search of a few points (MIN_POINTS, at the cost per point seen so far);
- each round's search gets half of what is left once a round's fixed part is set aside (all of
  it in the last round the round budget allows), never more than `--time-budget`, and as many
  points as that time holds at the cost per point seen so far, so that `auto` picks TPE
  rather than walking a truncated exhaustive order;
- a long launch (LONG_LAUNCH_US or more) shortens the re-tests, not the search: the best and
  the candidate are re-tested in LONG_RETEST_ROUNDS interleaved rounds (the fewest that give
  the per-round interval), the search re-tests its top LONG_TOP_K, and the worker takes fewer
  repetitions of a long launch (`TimingConfig.long_ms`). The acceptance rule is the same: fewer
  samples widen its 95% interval, and a round it cannot decide is "too noisy to decide".
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from pragma_ncu.measure.records import RoundRecord
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Budget

LONG_LAUNCH_US = 1000.0  # a launch this long or longer is re-tested in fewer rounds
LONG_RETEST_ROUNDS = 2  # the fewest rounds that give the per-round (Student-t) interval
LONG_TOP_K = 2  # the search's re-test of a long launch: its best two, beside the incumbent
MIN_POINTS = 4  # a round is worth starting when its search can measure this many points
SEARCH_SHARE = 0.5  # of the time left after a round's fixed part, what this round's search gets
# Before any round has run, its fixed part is modelled on the baseline: the search's re-test
# measures its top candidates, the best at each shape and the incumbent (about top_k + 2
# entrants) for `rounds` rounds, the side by side two entrants for `side_rounds`, each entrant
# round costing what one of the baseline's did, and one profile.
EXTRA_RETEST_ENTRANTS = 2


@dataclass(frozen=True)
class RoundCost:
    """What a round is expected to cost: its fixed part (re-tests, profile) and a search's
    cost per point, in seconds."""

    fixed_s: float
    per_point_s: float

    @property
    def least_s(self) -> float:
        """The cheapest round worth running: its fixed part and MIN_POINTS points."""
        return self.fixed_s + MIN_POINTS * self.per_point_s


@contextlib.contextmanager
def phase(clock: Callable[[], float], phases: dict[str, float], name: str) -> Iterator[None]:
    """Add the seconds the block takes to `phases[name]` (a round's record keeps them)."""
    start = clock()
    try:
        yield
    finally:
        phases[name] = round(phases.get(name, 0.0) + clock() - start, 3)


def is_long(objective_us: float | None) -> bool:
    return objective_us is not None and objective_us >= LONG_LAUNCH_US


def retest_rounds(rounds: int, objective_us: float | None) -> int:
    """The interleaved rounds of a re-test of kernels whose launch takes `objective_us`."""
    return min(rounds, LONG_RETEST_ROUNDS) if is_long(objective_us) else rounds


def round_cost(records: Sequence[RoundRecord], search: SearchOptions,
               side_rounds: int) -> RoundCost | None:
    """A round's expected cost from the rounds so far (None before the baseline's record, or
    from an older record that kept no phases)."""
    searched = [r for r in records if r.round > 0 and "search" in r.phases]
    points = sum(r.search.get("evaluated", 0) for r in searched)
    if searched and points:
        fixed = max(r.wall_s - r.phases["search"] for r in searched)
        return RoundCost(max(fixed, 0.0), sum(r.phases["search"] for r in searched) / points)
    base = records[0] if records else None
    if base is None or "retest" not in base.phases:
        return None
    objective = base.best_after.objective_us if base.best_after else None
    side = retest_rounds(side_rounds, objective)  # as the baseline was re-tested
    entrant_round = base.phases["retest"] / side
    top_k = min(search.top_k, LONG_TOP_K) if is_long(objective) else search.top_k
    rounds = (top_k + EXTRA_RETEST_ENTRANTS) * search.rounds + 2 * side
    fixed = entrant_round * rounds + base.phases.get("profile", 0.0) \
        + base.phases.get("check", 0.0)
    return RoundCost(fixed, entrant_round + base.phases.get("check", 0.0))


def search_options(search: SearchOptions, left_s: float | None, cost: RoundCost | None,
                   last: bool, objective_us: float | None) -> SearchOptions:
    """The round's search: a long launch re-tests fewer candidates; with a run budget, the
    search gets its share of the time left (`last`: the last round the round budget allows)
    and as many points as that share holds at the cost per point seen so far."""
    if is_long(objective_us):
        search = replace(search, top_k=min(search.top_k, LONG_TOP_K))
    if left_s is None or cost is None:
        return search
    free = max(left_s - cost.fixed_s, 0.0)
    share = max(free if last else SEARCH_SHARE * free, MIN_POINTS * cost.per_point_s)
    asked = search.budget.seconds
    seconds = share if asked is None else min(asked, share)
    points = max(MIN_POINTS, math.floor(seconds / cost.per_point_s)) \
        if cost.per_point_s > 0 else None
    asked_points = search.budget.evaluations
    evaluations = points if asked_points is None else \
        asked_points if points is None else min(asked_points, points)
    return replace(search, budget=Budget(evaluations, seconds))
