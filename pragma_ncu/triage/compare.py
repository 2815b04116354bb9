"""The duration verdict of one kernel group: regression, improvement or unchanged.

In order of preference:
1. repeated timings on both sides (a `timing.json`, or kernels timed now): the medians are
   compared and a difference counts only when it exceeds both sides' noise (the rule of
   `stats.beats`), and then only when it also exceeds the threshold;
2. the group's launches on each side as two samples (ncu's duration of each launch): the
   Hodges-Lehmann ratio new/base with its 95% confidence interval (`stats.shift_ratio`, the
   interval of a Mann-Whitney test); a change counts only when the interval excludes 1 (beyond
   the launch-to-launch noise) and the ratio also exceeds the threshold;
3. too few launches for an interval (one per side, or fewer than about four): the medians of
   ncu's durations against the threshold alone, and the verdict says there is no noise estimate.
"""

from __future__ import annotations

import statistics

from pragma_ncu.measure import stats
from pragma_ncu.triage.groups import KernelGroup
from pragma_ncu.triage.report import (
    IMPROVEMENT,
    REGRESSION,
    UNCHANGED,
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
    delta = stats.relative_change_pct(b_ncu, n_ncu)
    only = ("BASE" if base_timing else "NEW") if (base_timing or new_timing) else ""
    sample = ("one ncu measurement per side" if base.count == new.count == 1 else
              f"too few launches for a confidence interval ({base.count} + {new.count})")
    note = (f"{sample} (timing only on {only}): " if only else f"{sample}: ") + \
        "no noise estimate, decided by the threshold"
    return DurationChange(b_ncu, n_ncu, delta, "ncu", _verdict(delta, threshold_pct, None),
                          ncu_base_us=b_ncu, ncu_new_us=n_ncu, note=note,
                          launches_base=counts[0], launches_new=counts[1])


def _by_launches(est: stats.RatioEstimate, b_ncu: float, n_ncu: float, threshold_pct: float,
                 counts: tuple[int, int]) -> DurationChange:
    delta = 100 * (est.ratio - 1)
    low, high = 100 * (est.low - 1), 100 * (est.high - 1)
    beyond = est.excludes_one
    note = (f"Hodges-Lehmann ratio of {est.n_base} + {est.n_new} launches, "
            f"{est.confidence:.0%} CI {low:+.1f}%..{high:+.1f}%: "
            f"{'beyond' if beyond else 'within'} the launch-to-launch noise")
    return DurationChange(b_ncu, n_ncu, delta, "launches",
                          _verdict(delta, threshold_pct, beyond), None, beyond, b_ncu, n_ncu,
                          note, low, high, *counts)


def _by_timing(base: Timing, new: Timing, threshold_pct: float, b_ncu: float | None,
               n_ncu: float | None, counts: tuple[int, int]) -> DurationChange:
    b, n = base.pooled(), new.pooled()
    delta = stats.relative_change_pct(b.median_us, n.median_us)
    beyond = stats.beats(b, n) or stats.beats(n, b)
    noise = 100.0 * max(b.iqr_us, n.iqr_us) / b.median_us if b.median_us else None
    runs = f"median of {len(base.runs)} + {len(new.runs)} timing runs"
    note = (f"{runs}; the difference is {'beyond' if beyond else 'within'} the noise"
            + (f" (±{noise:.1f}%)" if noise is not None else ""))
    return DurationChange(b.median_us, n.median_us, delta, "timing",
                          _verdict(delta, threshold_pct, beyond), noise, beyond, b_ncu, n_ncu,
                          note, None, None, *counts)


def _verdict(delta_pct: float, threshold_pct: float, beyond_noise: bool | None) -> str:
    if beyond_noise is False:
        return UNCHANGED
    if delta_pct > threshold_pct:
        return REGRESSION
    if delta_pct < -threshold_pct:
        return IMPROVEMENT
    return UNCHANGED
