"""The duration verdict of one kernel group: regression, improvement, unchanged, or too noisy
to decide.

The change new/base is estimated with an interval, in order of preference:
1. repeated timings on both sides (a `timing.json`, or kernels timed now): the runs' medians
   compared. Where the runs kept their samples, the interval covers both the Hodges-Lehmann
   interval of all samples pooled (`stats.shift_ratio`: the launch-to-launch noise, robust to
   a run whose samples fall in two modes) and the ratios of every pair of runs' medians (what
   moves a whole run: another process arriving between runs), as `search.compare` takes the
   widest of its two views; without samples, the medians' difference plus or minus the larger
   noise of the two sides (the larger of a run's IQR and the spread of the run medians);
2. the group's launches on each side as two samples (the collector's duration of each
   launch): the Hodges-Lehmann ratio with its 95% confidence interval (the interval of a
   Mann-Whitney test);
3. too few launches for an interval (one per side, or fewer than about four): the medians of
   the durations against the threshold alone, and the verdict says there is no noise estimate.

One rule reads the interval (`verdict`): a change beyond the noise (the interval excludes no
change) is a regression or an improvement when it also exceeds the threshold; an interval
within the threshold on both sides is unchanged; one that holds both no change and a change
beyond the threshold is too noisy to decide, never a regression: the gate does not fail on
noise, and does not call unchanged what it could not measure.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pragma_ncu.measure import stats
from pragma_ncu.triage.groups import KernelGroup
from pragma_ncu.triage.report import (
    IMPROVEMENT,
    REGRESSION,
    UNCHANGED,
    UNDECIDED,
    DurationChange,
    Timing,
    TriageError,
)

CONFIDENCE = 0.95


def group_change(base: KernelGroup, new: KernelGroup, base_timing: Timing | None,
                 new_timing: Timing | None, threshold_pct: float) -> DurationChange:
    """Compare a kernel group's time on both sides; see the module docstring for the rules."""
    b_ncu = statistics.median(base.durations_us) if base.durations_us else None
    n_ncu = statistics.median(new.durations_us) if new.durations_us else None
    counts = (base.count, new.count)
    if base_timing is not None and new_timing is not None:
        return _by_timing(base_timing, new_timing, threshold_pct, b_ncu, n_ncu, counts)
    if b_ncu is None or n_ncu is None:
        side = "BASE" if b_ncu is None else "NEW"
        raise TriageError(f"kernel {new.name}: no duration on {side} (its profile lacks "
                          "gpu__time_duration.sum: collect the SpeedOfLight section) and no "
                          "timing.json on both sides")
    estimate = stats.shift_ratio(base.durations_us, new.durations_us, CONFIDENCE)
    if estimate is not None:
        return _by_launches(estimate, b_ncu, n_ncu, threshold_pct, counts)
    only = ("BASE" if base_timing else "NEW") if (base_timing or new_timing) else ""
    sample = ("one ncu measurement per side" if base.count == new.count == 1 else
              f"too few launches for a confidence interval ({base.count} + {new.count})")
    return _by_threshold(b_ncu, n_ncu, threshold_pct, counts,
                         f"{sample} (timing only on {only})" if only else sample)


def call_change(base_us: Sequence[float], new_us: Sequence[float], threshold_pct: float
                ) -> DurationChange:
    """Compare one call the library answered with other kernels (a swap): the call's time in
    each place it stood, on each side, as the two samples (rule 2 of the module docstring;
    rule 3 with fewer)."""
    b, n = statistics.median(base_us), statistics.median(new_us)
    counts = (len(base_us), len(new_us))
    estimate = stats.shift_ratio(base_us, new_us, CONFIDENCE)
    if estimate is not None:
        return _by_launches(estimate, b, n, threshold_pct, counts, "calls")
    return _by_threshold(b, n, threshold_pct, counts, "too few calls for a confidence interval "
                         f"({counts[0]} + {counts[1]})")


def _by_threshold(b: float, n: float, threshold_pct: float, counts: tuple[int, int],
                  sample: str) -> DurationChange:
    """Rule 3: too few samples for an interval (`sample` says why): the medians against the
    threshold alone."""
    delta = stats.relative_change_pct(b, n)
    return DurationChange(b, n, delta, "ncu", verdict(delta, threshold_pct), ncu_base_us=b,
                          ncu_new_us=n, note=f"{sample}: no noise estimate, decided by the "
                          "threshold", launches_base=counts[0], launches_new=counts[1])


def _by_launches(est: stats.RatioEstimate, b_ncu: float, n_ncu: float, threshold_pct: float,
                 counts: tuple[int, int], what: str = "launches") -> DurationChange:
    delta = 100 * (est.ratio - 1)
    low, high = 100 * (est.low - 1), 100 * (est.high - 1)
    decided = verdict(delta, threshold_pct, (low, high))
    note = (f"Hodges-Lehmann ratio of {est.n_base} + {est.n_new} {what}, "
            f"{est.confidence:.0%} CI {low:+.1f}%..{high:+.1f}%: "
            + _noise_words(decided, est.excludes_one, "the launch-to-launch noise"))
    return DurationChange(b_ncu, n_ncu, delta, "launches", decided, None, est.excludes_one,
                          b_ncu, n_ncu, note, low, high, *counts)


def _by_timing(base: Timing, new: Timing, threshold_pct: float, b_ncu: float | None,
               n_ncu: float | None, counts: tuple[int, int]) -> DurationChange:
    b, n = base.pooled(), new.pooled()
    delta = stats.relative_change_pct(b.median_us, n.median_us)
    noise = 100.0 * max(b.iqr_us, n.iqr_us) / b.median_us if b.median_us else None
    interval = timing_interval(base, new)
    if interval is not None:
        low, high = 100 * (interval.low - 1), 100 * (interval.high - 1)
        how = (f"the change lies in {low:+.1f}%..{high:+.1f}% (the 95% interval of "
               f"{interval.n_base} + {interval.n_new} samples, widened to every pair of runs)")
    elif noise is not None:
        low, high = delta - noise, delta + noise
        how = f"the noise is ±{noise:.1f}%"
    else:
        low = high = delta
        how = "no noise estimate"
    beyond = low > 0 or high < 0
    decided = verdict(delta, threshold_pct, (low, high))
    note = (f"median of {len(base.runs)} + {len(new.runs)} timing runs; {how}: "
            + _noise_words(decided, beyond, "the noise"))
    shown = interval is not None  # an interval of the change, not the ± of the noise
    return DurationChange(b.median_us, n.median_us, delta, "timing", decided, noise, beyond,
                          b_ncu, n_ncu, note, low if shown else None, high if shown else None,
                          *counts)


def timing_interval(base: Timing, new: Timing) -> stats.RatioEstimate | None:
    """The interval of the ratio new/base from timing runs that kept their samples: the
    Hodges-Lehmann interval of the pooled samples, widened to the ratio of every pair of runs'
    medians. None where a side kept no samples (or a time is not positive)."""
    b_samples = [s for r in base.runs for s in r.samples_us]
    n_samples = [s for r in new.runs for s in r.samples_us]
    launches = stats.shift_ratio(b_samples, n_samples, CONFIDENCE) if b_samples and \
        n_samples else None
    b_runs, n_runs = [r.median_us for r in base.runs], [r.median_us for r in new.runs]
    if launches is None or min(b_runs + n_runs) <= 0:
        return None
    runs = stats.RatioEstimate(statistics.median(n_runs) / statistics.median(b_runs),
                               min(n_runs) / max(b_runs), max(n_runs) / min(b_runs),
                               CONFIDENCE, len(b_runs), len(n_runs))
    return stats.widest(launches, runs)


def verdict(delta_pct: float, threshold_pct: float,
            interval: tuple[float, float] | None = None) -> str:
    """The rule on a change (% of base) and its interval (low, high, %; None without a noise
    estimate: the threshold alone). See the module docstring."""
    if interval is not None:
        low, high = interval
        if low <= 0 <= high:  # no change is within the noise
            return UNCHANGED if -threshold_pct <= low and high <= threshold_pct else UNDECIDED
    if delta_pct > threshold_pct:
        return REGRESSION
    if delta_pct < -threshold_pct:
        return IMPROVEMENT
    return UNCHANGED


def _noise_words(decided: str, beyond: bool, noise: str) -> str:
    if decided == UNDECIDED:
        return f"too noisy to decide: {noise} swamps the difference"
    return f"{'beyond' if beyond else 'within'} {noise}"
