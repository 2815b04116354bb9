"""Timing statistics: robust summaries of repeated measurements (pure functions)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


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


def geomean(values: Sequence[float]) -> float:
    """The geometric mean of positive values (the objective over shapes of unequal size)."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


def quantile(sorted_values: Sequence[float], fraction: float) -> float:
    """Linear-interpolation quantile of already sorted values."""
    if not sorted_values:
        raise ValueError("quantile of no values")
    pos = (len(sorted_values) - 1) * fraction
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


def relative_change_pct(before: float, after: float) -> float:
    """(b - a) / a in percent."""
    return 100.0 * (after - before) / before if before else math.inf


@dataclass(frozen=True)
class RatioEstimate:
    """How much larger `new` is than `base`, from two samples: the Hodges-Lehmann estimate of
    the ratio (the median of all new/base ratios) and its distribution-free confidence
    interval (Moses), the interval of ratios a two-sided Mann-Whitney test would not reject."""

    ratio: float
    low: float  # bounds of the confidence interval
    high: float
    confidence: float
    n_base: int
    n_new: int

    @property
    def excludes_one(self) -> bool:
        """Whether the whole interval lies on one side of 1: a change beyond the noise."""
        return self.low > 1.0 or self.high < 1.0


MAX_RANK_SAMPLE = 400  # more values than this per side are thinned to evenly spaced quantiles
_Z = {0.90: 1.6448536, 0.95: 1.9599640, 0.99: 2.5758293}


def shift_ratio(base: Sequence[float], new: Sequence[float], confidence: float = 0.95
                ) -> RatioEstimate | None:
    """The Hodges-Lehmann ratio new/base and its Moses confidence interval, on log values
    (durations scale, so the shift model holds for logs). The interval's ranks come from the
    Mann-Whitney statistic's normal approximation: C = floor(mn/2 - z sqrt(mn(m+n+1)/12)),
    the bounds are the C-th smallest and largest of the m*n pairwise log-ratios. None when
    the samples are too small for any interval at this confidence (C < 1: fewer than about
    4 values a side at 95%), or a value is not positive."""
    if confidence not in _Z:
        raise ValueError(f"confidence {confidence}: one of {sorted(_Z)}")
    b, n = _thin(base), _thin(new)
    m, k = len(b), len(n)
    if m == 0 or k == 0 or min(b.min(), n.min()) <= 0:
        return None
    rank = math.floor(m * k / 2 - _Z[confidence] * math.sqrt(m * k * (m + k + 1) / 12))
    if rank < 1:
        return None
    diffs = np.sort((np.log(n)[None, :] - np.log(b)[:, None]).ravel())
    low, high = diffs[rank - 1], diffs[len(diffs) - rank]
    return RatioEstimate(float(np.exp(np.median(diffs))), float(np.exp(low)),
                         float(np.exp(high)), confidence, len(base), len(new))


def _thin(values: Sequence[float]) -> np.ndarray:
    """At most MAX_RANK_SAMPLE values: evenly spaced order statistics of a larger sample
    (conservative: the interval widens as if fewer launches were seen)."""
    data = np.sort(np.asarray(values, dtype=float))
    if len(data) <= MAX_RANK_SAMPLE:
        return data
    return data[np.linspace(0, len(data) - 1, MAX_RANK_SAMPLE).round().astype(int)]
