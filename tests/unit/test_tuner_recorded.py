"""Searches replayed from measurements recorded on an NVIDIA H200 (2026-11-21,
tests/fixtures/tuner/): the decisions the tuner takes on real data, without a GPU."""

from __future__ import annotations

import pytest

from tests.fakes.replay import load_recording
from tests.recorded_search import FIXTURES, KERNELS, replay


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_replayed_exhaustive_search_takes_the_recorded_decision(name: str) -> None:
    result, meta = replay(name, "exhaustive", 500)
    assert result.stats.evaluated == meta["stats"]["evaluated"]
    assert result.best_point == meta["best_point"]
    for shape, verdict in result.per_shape:
        recorded = meta["per_shape"][shape]["winner"]["point"]
        assert verdict.winner is not None and verdict.winner.point == recorded, shape
        assert verdict.accepted


def test_every_recorded_point_was_verified_at_the_odd_shape_too() -> None:
    evaluations, _ = load_recording(FIXTURES / "silu_and_mul-h200.results.json.gz")
    ok = [e for e in evaluations if e.ok]
    assert len(ok) == 72
    assert all([m.shape for m in e.checked] == ["odd"] and e.checked[0].timing is None
               for e in ok)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tpe_with_a_third_of_the_budget_comes_within_3pct(seed: int) -> None:
    exhaustive, _ = replay("silu_and_mul", "exhaustive", 500)
    tpe, _ = replay("silu_and_mul", "tpe", 24, seed=seed)
    assert tpe.stats.evaluated == 24
    best, found = exhaustive.general.winner, tpe.general.winner
    assert best is not None and found is not None
    assert found.objective <= 1.03 * best.objective  # type: ignore[operator]


def test_noise_in_the_retest_does_not_flip_the_winner_of_a_clear_gap() -> None:
    result, meta = replay("silu_and_mul", "exhaustive", 500, jitter=1.0, seed=5)
    assert result.general.accepted
    assert result.general.speedup is not None and result.general.speedup > 1.7
