"""Timing statistics: robust summaries of repeated measurements (pure functions)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TimingStats:
    median_us: float
    mean_us: float
    min_us: float
    max_us: float
    p10_us: float
    p90_us: float
    iqr_us: float
    stdev_us: float
    reps: int
    mode: str  # "events" (one launch per sample, L2 flushed) | "graph" (launches per sample)
    launches_per_sample: int = 1

    @property
    def spread_pct(self) -> float:
        """Interquartile range as a percentage of the median: the noise figure we report."""
        return 100.0 * self.iqr_us / self.median_us if self.median_us > 0 else math.inf

    @property
    def median_ci_pct(self) -> float:
        """Approximate 95% half-width of the median, in percent (1.58 IQR / sqrt(n), McGill)."""
        if self.reps < 2 or self.median_us <= 0:
            return math.inf
        return 100.0 * 1.58 * self.iqr_us / math.sqrt(self.reps) / self.median_us


def geomean(values: Sequence[float]) -> float:
    """The geometric mean of positive values (the objective over shapes of unequal size)."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile of already sorted values."""
    if not sorted_values:
        raise ValueError("quantile of no values")
    pos = (len(sorted_values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(samples_us: Sequence[float], mode: str = "events",
              launches_per_sample: int = 1) -> TimingStats:
    """Summarize per-launch times in microseconds."""
    values = sorted(float(v) for v in samples_us)
    if not values:
        raise ValueError("no timing samples")
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise ValueError("timing samples must be finite and non-negative")
    return TimingStats(
        median_us=quantile(values, 0.5), mean_us=statistics.fmean(values), min_us=values[0],
        max_us=values[-1], p10_us=quantile(values, 0.1), p90_us=quantile(values, 0.9),
        iqr_us=quantile(values, 0.75) - quantile(values, 0.25),
        stdev_us=statistics.stdev(values) if len(values) > 1 else 0.0,
        reps=len(values), mode=mode, launches_per_sample=launches_per_sample,
    )


def repetitions(pilot_us: float, overhead_us: float, budget_ms: float, min_reps: int,
                max_reps: int) -> int:
    """How many timed repetitions fit the budget, within [min_reps, max_reps]."""
    per_rep = max(pilot_us + overhead_us, 1e-3)
    return int(min(max_reps, max(min_reps, budget_ms * 1000.0 // per_rep)))


def beats(new: TimingStats, incumbent: TimingStats) -> bool:
    """True when `new` is faster than `incumbent` by more than both measurements' noise.

    The margin is the larger of the two interquartile ranges, so a difference inside the spread
    of either measurement never counts as an improvement.
    """
    margin = max(new.iqr_us, incumbent.iqr_us)
    return new.median_us + margin < incumbent.median_us


def relative_change_pct(a: float, b: float) -> float:
    """(b - a) / a in percent."""
    return 100.0 * (b - a) / a if a else math.inf
