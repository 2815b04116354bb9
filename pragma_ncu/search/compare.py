"""Whether a re-tested candidate is faster than the incumbent: the one acceptance rule.

`tune` (a round's candidate against the historical best) and `autotune` (the re-test's winner
against the incumbent, over all shapes and at each) both decide here, from the repeated
timings of their interleaved re-test rounds, never from two medians alone:

- **the interval.** The ratio candidate / incumbent of their times has two 95% intervals, and
  the rule takes the one that covers both (`stats.widest`):
  - per launch: the Hodges-Lehmann ratio with its Moses interval over every sample of every
    round, pooled (`stats.shift_ratio`, triage's statistics), which sees the launch-to-launch
    noise; over several shapes, the shapes' intervals at 1 - 5%/shapes each, averaged
    (`stats.joint_ratio`);
  - per round: the rounds' paired ratios of medians with a Student-t interval
    (`stats.paired_ratio`), which sees what moves a whole round (another process arriving,
    the clock or the cache state changing between rounds), the part the pooled launches hide.
  Where the worker kept no samples (recordings, measurements from before they were kept) the
  per-round interval is the whole evidence.
- **the outcome.**
  - faster: the whole interval lies below 1 - MARGIN;
  - not faster: it lies at or above 1 - MARGIN, so no gain of the margin's size is plausible,
    or it is narrower than the margin (a gain of about the margin's size, measured closely
    enough: more rounds would not make it worth taking);
  - undecided: it straddles 1 - MARGIN (or there is no interval yet): measure more rounds, and
    when the most rounds allowed still cannot tell, say "too noisy to decide" with the figures.
- **the margin** is 1% of the incumbent's time. A gain the interval shows but smaller than
  that is not taken: whole searches on the H200 reproduced their winners' times within 0.2 to
  0.5% from run to run (docs/tuner.md, "Repeatability"), so 1% is twice what the setup itself
  moves between runs, which no interval of one run can see.
"""

from __future__ import annotations

from collections.abc import Sequence

from pragma_ncu.measure import stats
from pragma_ncu.search.results import (
    FASTER,
    NOT_FASTER,
    UNDECIDED,
    Comparison,
    Retest,
    ShapeTime,
)

MARGIN = 0.01
CONFIDENCE = 0.95


def compare(incumbent: Retest, candidate: Retest, shape: str | None = None) -> Comparison:
    """`candidate` against `incumbent` (both re-tested "ok"), over all of the incumbent's
    shapes (their geometric mean, the objective) or at one `shape`."""
    names = [shape] if shape is not None else [s.shape for s in incumbent.shapes]
    pairs = [(incumbent.at(n), candidate.at(n)) for n in names]
    timed = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not timed or len(timed) != len(pairs):
        raise ValueError(f"compare: {candidate.key} or {incumbent.key} was not re-tested at "
                         f"every one of {names}")
    ratio = stats.geomean([b.median_us / a.median_us for a, b in timed])
    launches = _per_launch(timed)
    rounds = _per_round(timed)
    interval = stats.widest(launches, rounds)
    noise = max(max(a.noise_pct, b.noise_pct) for a, b in timed)
    common = min(min(len(a.rounds_us), len(b.rounds_us)) for a, b in timed)
    samples = launches.n_base + launches.n_new if launches is not None else 0
    if interval is None:
        return Comparison(UNDECIDED, 1 / ratio, None, None, CONFIDENCE, MARGIN, common, noise,
                          samples)
    return Comparison(outcome(interval.low, interval.high), 1 / ratio, 1 / interval.high,
                      1 / interval.low, CONFIDENCE, MARGIN, common, noise, samples)


def outcome(low: float, high: float) -> str:
    """The rule on an interval [low, high] of the time ratio candidate / incumbent. An
    interval narrower than the margin that straddles it is decided, not measured again: the
    gain is about the margin's size whatever more rounds show, so it is not taken (seen on an
    H100, 2026-11-26: 1.01x measured to within 0.1% was called "too noisy" at 0% noise)."""
    if high < 1.0 - MARGIN:
        return FASTER
    if low >= 1.0 - MARGIN or high - low < MARGIN:
        return NOT_FASTER
    return UNDECIDED


def _per_launch(timed: Sequence[tuple[ShapeTime, ShapeTime]]) -> stats.RatioEstimate | None:
    """The pooled samples' interval, over the shapes jointly; None unless both kept samples
    at every shape and each gives an interval."""
    each = 1.0 - (1.0 - CONFIDENCE) / len(timed)
    parts = [stats.shift_ratio(a.samples_us, b.samples_us, each) if a.samples_us and
             b.samples_us else None for a, b in timed]
    known = [p for p in parts if p is not None]
    return stats.joint_ratio(known) if known and len(known) == len(parts) else None


def _per_round(timed: Sequence[tuple[ShapeTime, ShapeTime]]) -> stats.RatioEstimate | None:
    """The paired rounds' interval of the objective: in each round both measured, the ratio
    of the geometric means over the shapes of the round's medians."""
    count = min(min(len(a.rounds_us), len(b.rounds_us)) for a, b in timed)
    base = [_geomean_at(i, [a for a, _ in timed]) for i in range(count)]
    new = [_geomean_at(i, [b for _, b in timed]) for i in range(count)]
    return stats.paired_ratio(base, new, CONFIDENCE)


def _geomean_at(index: int, shapes: Sequence[ShapeTime]) -> float:
    values = [s.rounds_us[index] for s in shapes]
    return stats.geomean(values) if min(values) > 0 else 0.0  # 0: no ratio (paired_ratio)
