"""The duration verdict of one matched kernel: regression, improvement or unchanged.

With repeated timings on both sides (a `timing.json` per side, or kernels timed now), the
medians are compared and a difference counts only when it exceeds both sides' noise (the rule of
`stats.beats`), and then only when it also exceeds the threshold. With one ncu measurement per
side there is no noise estimate: the threshold alone decides, and the verdict says so.
"""

from __future__ import annotations

from pragma_ncu import stats
from pragma_ncu.diagnose import quantities
from pragma_ncu.triage.model import (
    IMPROVEMENT,
    REGRESSION,
    UNCHANGED,
    DurationChange,
    KernelMatch,
    Timing,
    TriageError,
)


def ncu_us(match: KernelMatch) -> tuple[float | None, float | None]:
    """ncu's duration of each side in µs (gpu__time_duration.sum), None when not collected."""
    b, n = (quantities.read(k, "duration_ns") for k in (match.base, match.new))
    return (b.value / 1000 if b else None), (n.value / 1000 if n else None)


def duration_change(match: KernelMatch, base: Timing | None, new: Timing | None,
                    threshold_pct: float) -> DurationChange:
    """Compare the kernel's time on both sides; see the module docstring for the rules."""
    b_ncu, n_ncu = ncu_us(match)
    if base is not None and new is not None:
        return _by_timing(base, new, threshold_pct, b_ncu, n_ncu)
    if b_ncu is None or n_ncu is None:
        side = "BASE" if b_ncu is None else "NEW"
        raise TriageError(f"kernel {match.new.name}: no duration on {side} (its profile lacks "
                          "gpu__time_duration.sum: collect the SpeedOfLight section) and no "
                          "timing.json on both sides")
    delta = stats.relative_change_pct(b_ncu, n_ncu)
    only = ("BASE" if base else "NEW") if (base or new) else ""
    note = (f"one ncu measurement per side (timing only on {only}): " if only else
            "one ncu measurement per side: ") + "no noise estimate, decided by the threshold"
    return DurationChange(b_ncu, n_ncu, delta, "ncu", _verdict(delta, threshold_pct, None),
                          ncu_base_us=b_ncu, ncu_new_us=n_ncu, note=note)


def _by_timing(base: Timing, new: Timing, threshold_pct: float, b_ncu: float | None,
               n_ncu: float | None) -> DurationChange:
    b, n = base.pooled(), new.pooled()
    delta = stats.relative_change_pct(b.median_us, n.median_us)
    beyond = stats.beats(b, n) or stats.beats(n, b)
    noise = 100.0 * max(b.iqr_us, n.iqr_us) / b.median_us if b.median_us else None
    runs = f"median of {len(base.runs)} + {len(new.runs)} timing runs"
    note = (f"{runs}; the difference is {'beyond' if beyond else 'within'} the noise"
            + (f" (±{noise:.1f}%)" if noise is not None else ""))
    return DurationChange(b.median_us, n.median_us, delta, "timing",
                          _verdict(delta, threshold_pct, beyond), noise, beyond, b_ncu, n_ncu,
                          note)


def _verdict(delta_pct: float, threshold_pct: float, beyond_noise: bool | None) -> str:
    if beyond_noise is False:
        return UNCHANGED
    if delta_pct > threshold_pct:
        return REGRESSION
    if delta_pct < -threshold_pct:
        return IMPROVEMENT
    return UNCHANGED
