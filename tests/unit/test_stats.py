"""Unit tests for pragma_ncu.measure.stats: robust timing summaries and two-sample ratios."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from pragma_ncu.measure.stats import (
    RatioEstimate,
    TimingStats,
    beats,
    joint_ratio,
    paired_ratio,
    quantile,
    relative_change_pct,
    repetitions,
    shift_ratio,
    student_t_quantile,
    summarize,
    widest,
)


def stats(median: float, iqr: float, reps: int = 50) -> TimingStats:
    return TimingStats(median_us=median, mean_us=median, min_us=median - iqr, max_us=median + iqr,
                       p10_us=median - iqr, p90_us=median + iqr, iqr_us=iqr, stdev_us=iqr,
                       reps=reps, mode="events")


# --- quantile / summarize ---------------------------------------------------------------------

def test_quantile_linear_interpolation():
    values = [10.0, 20.0, 30.0, 40.0]
    assert quantile(values, 0.0) == 10.0
    assert quantile(values, 1.0) == 40.0
    assert quantile(values, 0.5) == 25.0
    assert quantile(values, 0.25) == pytest.approx(17.5)
    assert quantile([7.0], 0.3) == 7.0


def test_quantile_of_nothing():
    with pytest.raises(ValueError):
        quantile([], 0.5)


def test_summarize_odd_count():
    s = summarize([5.0, 1.0, 4.0, 2.0, 3.0])  # unsorted on purpose
    assert s.median_us == 3.0
    assert s.mean_us == 3.0
    assert s.min_us == 1.0
    assert s.max_us == 5.0
    assert s.p10_us == pytest.approx(1.4)
    assert s.p90_us == pytest.approx(4.6)
    assert s.iqr_us == pytest.approx(2.0)  # q75 = 4, q25 = 2
    assert s.stdev_us == pytest.approx(math.sqrt(2.5))
    assert s.reps == 5
    assert s.mode == "events"
    assert s.launches_per_sample == 1


def test_summarize_even_count():
    s = summarize([4, 1, 3, 2], mode="graph", launches_per_sample=20)
    assert s.median_us == 2.5
    assert s.mean_us == 2.5
    assert s.p10_us == pytest.approx(1.3)
    assert s.p90_us == pytest.approx(3.7)
    assert s.iqr_us == pytest.approx(3.25 - 1.75)
    assert s.stdev_us == pytest.approx(statistics.stdev([1, 2, 3, 4]))
    assert s.reps == 4
    assert s.mode == "graph"
    assert s.launches_per_sample == 20
    assert isinstance(s.median_us, float)


def test_summarize_robust_to_outlier():
    s = summarize([10.0] * 9 + [1000.0])
    assert s.median_us == 10.0
    assert s.iqr_us == 0.0
    assert s.max_us == 1000.0
    assert s.mean_us == pytest.approx(109.0)


def test_summarize_single_sample():
    s = summarize([7.5])
    assert (s.median_us, s.min_us, s.max_us, s.p10_us, s.p90_us) == (7.5,) * 5
    assert s.iqr_us == 0.0
    assert s.stdev_us == 0.0
    assert s.reps == 1


@pytest.mark.parametrize(
    "samples",
    [[], [float("nan")], [1.0, float("nan")], [1.0, -0.5], [float("inf")], [1.0, float("-inf")]],
)
def test_summarize_rejects_bad_samples(samples):
    with pytest.raises(ValueError):
        summarize(samples)


def test_summarize_accepts_zero():
    s = summarize([0.0, 0.0, 0.0])
    assert s.median_us == 0.0


# --- spread / confidence ------------------------------------------------------------------------

def test_spread_pct():
    s = summarize([5.0, 1.0, 4.0, 2.0, 3.0])
    assert s.spread_pct == pytest.approx(100.0 * 2.0 / 3.0)
    assert stats(100.0, 5.0).spread_pct == pytest.approx(5.0)
    assert stats(0.0, 1.0).spread_pct == math.inf


# --- repetitions --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("pilot", "overhead", "budget_ms", "expected"),
    [
        (1000.0, 0.0, 100.0, 100),     # fits: 100 ms / 1 ms
        (40.0, 10.0, 10.0, 200),       # overhead counts: 10 ms / 50 us
        (10.0, 0.0, 100.0, 2000),      # 10000 would fit: clamped to max_reps
        (10000.0, 0.0, 100.0, 20),     # only 10 fit: raised to min_reps
        (0.0, 0.0, 100.0, 2000),       # zero pilot does not divide by zero
        (1e9, 1e9, 1.0, 20),
    ],
)
def test_repetitions(pilot, overhead, budget_ms, expected):
    n = repetitions(pilot, overhead, budget_ms, min_reps=20, max_reps=2000)
    assert n == expected
    assert type(n) is int


def test_repetitions_bounds_are_inclusive():
    assert repetitions(1000.0, 0.0, 20.0, min_reps=20, max_reps=2000) == 20
    assert repetitions(1000.0, 0.0, 2000.0, min_reps=20, max_reps=2000) == 2000
    assert repetitions(1000.0, 0.0, 21.0, min_reps=20, max_reps=2000) == 21


# --- beats --------------------------------------------------------------------------------------

def test_beats_clear_win():
    assert beats(stats(8.0, 0.5), stats(10.0, 0.5)) is True


def test_beats_inside_new_iqr_does_not_count():
    # 2% faster, but the new measurement's IQR (0.5) is larger than the gap (0.2).
    assert beats(stats(9.8, 0.5), stats(10.0, 0.1)) is False


def test_beats_inside_incumbent_iqr_does_not_count():
    # the incumbent's spread (1.5) dominates the margin
    assert beats(stats(9.0, 0.1), stats(10.0, 1.5)) is False


def test_beats_exactly_at_margin_does_not_count():
    assert beats(stats(9.0, 1.0), stats(10.0, 0.5)) is False
    assert beats(stats(8.99, 1.0), stats(10.0, 0.5)) is True


def test_beats_slower_or_equal():
    assert beats(stats(10.0, 0.0), stats(10.0, 0.0)) is False
    assert beats(stats(11.0, 0.1), stats(10.0, 0.1)) is False
    # not symmetric: the faster one beats the slower one
    assert beats(stats(10.0, 0.1), stats(11.0, 0.1)) is True


def test_beats_from_samples():
    incumbent = summarize([10.0, 10.2, 9.9, 10.1, 10.05, 9.95, 10.3, 9.8])
    noisy_near = summarize([9.7, 10.4, 9.6, 10.0, 9.5, 10.2, 9.9, 9.8])
    clear = summarize([8.0, 8.1, 7.9, 8.05, 7.95, 8.2, 8.0, 7.85])
    assert noisy_near.median_us < incumbent.median_us  # "faster" on the median alone ...
    assert beats(noisy_near, incumbent) is False  # ... but within the noise
    assert beats(clear, incumbent) is True
    assert beats(incumbent, clear) is False


def test_relative_change_pct():
    assert relative_change_pct(10.0, 12.0) == pytest.approx(20.0)
    assert relative_change_pct(10.0, 8.0) == pytest.approx(-20.0)
    assert relative_change_pct(0.0, 1.0) == math.inf


# --- the Hodges-Lehmann ratio and its Moses interval (triage's verdict from launches) ---------


def test_shift_ratio_agrees_with_the_mann_whitney_test():
    """The interval excludes 1 exactly when a two-sided Mann-Whitney test rejects at 5%
    (checked against scipy away from the boundary, where the normal approximation of the
    interval's rank is a little conservative)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(600):
        m, n = rng.integers(4, 40, 2)
        x = rng.lognormal(0.0, 0.05, m)
        y = rng.lognormal(rng.normal(0.0, 0.03), 0.05, n)
        est = shift_ratio(x, y)
        assert est is not None
        p = scipy_stats.mannwhitneyu(np.log(y), np.log(x), method="asymptotic",
                                     use_continuity=False).pvalue
        if p < 0.03 or p > 0.07:
            assert est.excludes_one == (p < 0.05), (m, n, p, est)
            checked += 1
        assert est.low <= est.ratio <= est.high
    assert checked > 400


def test_shift_ratio_recovers_a_planted_ratio_and_needs_enough_values():
    rng = np.random.default_rng(1)
    base = 100 * np.exp(rng.normal(0, 0.01, 50))
    est = shift_ratio(base, 1.2 * 100 * np.exp(rng.normal(0, 0.01, 50)))
    assert est is not None and est.excludes_one and est.low < 1.2 < est.high
    same = shift_ratio(base, 100 * np.exp(rng.normal(0, 0.01, 50)))
    assert same is not None and not same.excludes_one
    assert shift_ratio([1.0, 1.1, 0.9], [2.0, 2.1, 1.9]) is None  # 3 + 3: no 95% interval
    assert shift_ratio([1.0] * 4, [2.0] * 4) is not None
    assert shift_ratio([1.0, 0.0, 1.0, 1.0], [1.0] * 4) is None  # a zero duration
    big = shift_ratio(np.linspace(1, 2, 5000), np.linspace(1, 2, 5000) * 1.1)
    assert big is not None and big.n_base == 5000 and big.low < 1.1 < big.high
    with pytest.raises(ValueError):
        shift_ratio([1.0] * 5, [1.0] * 5, confidence=0.5)


# --- the re-test's intervals: rounds paired, shapes joined, the widest taken -----------------


def test_student_t_quantiles_match_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 4, 5, 7, 11, 30, 200):
        for p in (0.5, 0.9, 0.975, 0.99167, 0.9995):
            assert student_t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df),
                                                              rel=1e-9, abs=1e-12)
    with pytest.raises(ValueError):
        student_t_quantile(0.4, 3)
    with pytest.raises(ValueError):
        student_t_quantile(0.975, 0)


def test_paired_ratio_is_the_t_interval_of_the_log_ratios():
    scipy_stats = pytest.importorskip("scipy.stats")
    base = [100.0, 104.0, 98.0, 101.0]
    new = [90.0, 95.0, 87.0, 92.0]
    est = paired_ratio(base, new)
    logs = np.log(np.array(new) / np.array(base))
    low, high = scipy_stats.t.interval(0.95, len(logs) - 1, loc=logs.mean(),
                                       scale=scipy_stats.sem(logs))
    assert est is not None and est.n_base == 4
    assert (math.log(est.low), math.log(est.high)) == pytest.approx((low, high))
    assert est.ratio == pytest.approx(math.exp(logs.mean()))
    assert paired_ratio([1.0], [2.0]) is None  # one pair: no spread to judge
    assert paired_ratio([1.0, 0.0], [1.0, 1.0]) is None
    same = paired_ratio([2.0, 4.0], [1.0, 2.0])  # pairs that agree exactly: no width
    assert same is not None and same.low == same.high == pytest.approx(0.5)


def test_joint_and_widest_intervals():
    a = RatioEstimate(0.5, 0.4, 0.6, 0.975, 10, 10)
    b = RatioEstimate(2.0, 1.5, 2.5, 0.975, 20, 20)
    joint = joint_ratio([a, b])
    assert joint.ratio == pytest.approx(1.0) and joint.confidence == pytest.approx(0.95)
    assert joint.low == pytest.approx(math.sqrt(0.4 * 1.5))
    assert joint.high == pytest.approx(math.sqrt(0.6 * 2.5))
    wide = widest(a, None, b)
    assert wide is not None and (wide.ratio, wide.low, wide.high) == (0.5, 0.4, 2.5)
    assert widest(None, None) is None
    with pytest.raises(ValueError):
        joint_ratio([])


def test_summarize_keeps_the_samples_only_when_asked():
    assert summarize([3.0, 1.0, 2.0]).samples_us == ()
    assert summarize([3.0, 1.0, 2.0], keep_samples=True).samples_us == (3.0, 1.0, 2.0)
