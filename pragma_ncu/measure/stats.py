"""Timing statistics: robust summaries of repeated measurements and intervals of the ratio of
two kernels' times (pure functions)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

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
    # the samples themselves, in the order taken, when the timing was asked to keep them (the
    # re-test's: the acceptance rule compares them); () elsewhere, so stored rows stay small
    samples_us: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        # read back from JSON (the worker's answer, a stored row) the samples are a list
        if not isinstance(self.samples_us, tuple):
            object.__setattr__(self, "samples_us", tuple(self.samples_us))

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
              launches_per_sample: int = 1, keep_samples: bool = False) -> TimingStats:
    """Summarize per-launch times in microseconds (and keep them, when asked)."""
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
        samples_us=tuple(float(v) for v in samples_us) if keep_samples else (),
    )


# A first sample at least this long is its own pilot: a long launch's samples agree to a few
# parts in a thousand, so more pilots would only spend its time.
LONG_PILOT_US = 1000.0


def repetitions(pilot_us: float, overhead_us: float, budget_ms: float, min_reps: int,
                max_reps: int, long_ms: float | None = None, floor_reps: int = 1) -> int:
    """How many timed repetitions fit the budget, within [min_reps, max_reps]. With `long_ms`,
    min_reps scales with the launch: it takes at most `long_ms` (a long launch gets as many
    as fit there, but never fewer than `floor_reps`)."""
    per_rep = max(pilot_us + overhead_us, 1e-3)
    least = min_reps
    if long_ms is not None:
        least = max(floor_reps, min(min_reps, int(long_ms * 1000.0 // per_rep)))
    return int(min(max_reps, max(least, budget_ms * 1000.0 // per_rep)))


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


def shift_ratio(base: Sequence[float], new: Sequence[float], confidence: float = 0.95
                ) -> RatioEstimate | None:
    """The Hodges-Lehmann ratio new/base and its Moses confidence interval, on log values
    (durations scale, so the shift model holds for logs). The interval's ranks come from the
    Mann-Whitney statistic's normal approximation: C = floor(mn/2 - z sqrt(mn(m+n+1)/12)),
    the bounds are the C-th smallest and largest of the m*n pairwise log-ratios. None when
    the samples are too small for any interval at this confidence (C < 1: fewer than about
    4 values a side at 95%), or a value is not positive."""
    z = _z(confidence)
    b, n = _thin(base), _thin(new)
    m, k = len(b), len(n)
    if m == 0 or k == 0 or min(b.min(), n.min()) <= 0:
        return None
    rank = math.floor(m * k / 2 - z * math.sqrt(m * k * (m + k + 1) / 12))
    if rank < 1:
        return None
    diffs = np.sort((np.log(n)[None, :] - np.log(b)[:, None]).ravel())
    low, high = diffs[rank - 1], diffs[len(diffs) - rank]
    return RatioEstimate(float(np.exp(np.median(diffs))), float(np.exp(low)),
                         float(np.exp(high)), confidence, len(base), len(new))


def paired_ratio(base: Sequence[float], new: Sequence[float], confidence: float = 0.95
                 ) -> RatioEstimate | None:
    """The geometric mean of the paired ratios new[i]/base[i] (values measured side by side,
    pair by pair: the rounds of an interleaved re-test) and its Student-t interval on their
    logs, whose width comes from how much the pairs disagree. None with fewer than two pairs
    or a value that is not positive."""
    _z(confidence)  # checks it
    pairs = list(zip(base, new, strict=False))
    if len(pairs) < 2 or min(min(p) for p in pairs) <= 0:
        return None
    logs = [math.log(n / b) for b, n in pairs]
    mean, count = statistics.fmean(logs), len(logs)
    spread = statistics.stdev(logs) / math.sqrt(count)
    half = student_t_quantile(0.5 + confidence / 2, count - 1) * spread
    return RatioEstimate(math.exp(mean), math.exp(mean - half), math.exp(mean + half),
                         confidence, count, count)


def joint_ratio(parts: Sequence[RatioEstimate]) -> RatioEstimate:
    """Several ratios (one per shape) as one: the geometric mean of the ratios, and of their
    bounds. Taken at confidence 1 - (1 - c)/len(parts) each (Bonferroni), the bounds hold
    together with confidence c, and so does their mean."""
    if not parts:
        raise ValueError("joint_ratio of no estimates")

    def mean(values: Sequence[float]) -> float:
        return math.exp(statistics.fmean(math.log(v) for v in values))

    return RatioEstimate(mean([p.ratio for p in parts]), mean([p.low for p in parts]),
                         mean([p.high for p in parts]),
                         1.0 - sum(1.0 - p.confidence for p in parts),
                         sum(p.n_base for p in parts), sum(p.n_new for p in parts))


def widest(*estimates: RatioEstimate | None) -> RatioEstimate | None:
    """The interval that covers all the given ones (those that exist), around the first's
    ratio: a difference counts only where every way of looking at the timings shows it."""
    given = [e for e in estimates if e is not None]
    if not given:
        return None
    return RatioEstimate(given[0].ratio, min(e.low for e in given), max(e.high for e in given),
                         min(e.confidence for e in given), max(e.n_base for e in given),
                         max(e.n_new for e in given))


def student_t_quantile(p: float, df: int) -> float:
    """The p-quantile (0.5 <= p < 1) of Student's t distribution with `df` >= 1 degrees of
    freedom: bisection on its exact distribution function for whole degrees of freedom."""
    if not 0.5 <= p < 1.0 or df < 1:
        raise ValueError(f"t quantile at p={p}, df={df}: needs 0.5 <= p < 1 and df >= 1")
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:
        low, high = high, 2.0 * high
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if _t_cdf(mid, df) < p else (low, mid)
    return (low + high) / 2


def _t_cdf(t: float, df: int) -> float:
    """P(T <= t) for t >= 0, from the closed form of P(|T| < t) for whole df (Abramowitz and
    Stegun 26.7.3 and 26.7.4): a finite series in the cosine of atan(t / sqrt(df))."""
    theta = math.atan(t / math.sqrt(df))
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2:  # odd: (2/pi) (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...))
        term, total = 1.0, 1.0 if df > 1 else 0.0
        for j in range(1, (df - 1) // 2):
            term *= cos2 * (2 * j) / (2 * j + 1)
            total += term
        inside = 2 / math.pi * (theta + sin * math.cos(theta) * total)
    else:  # even: sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...)
        term, total = 1.0, 1.0
        for j in range(1, df // 2):
            term *= cos2 * (2 * j - 1) / (2 * j)
            total += term
        inside = sin * total
    return 0.5 + inside / 2


def _z(confidence: float) -> float:
    """The two-sided normal quantile of `confidence`, which must lie strictly between 0.5 and
    1: at 0.5 or below an interval's bounds meet or cross."""
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"confidence {confidence}: must lie strictly between 0.5 and 1")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _thin(values: Sequence[float]) -> np.ndarray:
    """At most MAX_RANK_SAMPLE values: evenly spaced order statistics of a larger sample
    (conservative: the interval widens as if fewer launches were seen)."""
    data = np.sort(np.asarray(values, dtype=float))
    if len(data) <= MAX_RANK_SAMPLE:
        return data
    return data[np.linspace(0, len(data) - 1, MAX_RANK_SAMPLE).round().astype(int)]
