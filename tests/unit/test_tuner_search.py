"""The search loop, re-test and decision, driven by replayed measurements (no GPU)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.infra.errors import InputError
from pragma_ncu.measure.measurement import Status
from pragma_ncu.search import retest as retesting
from pragma_ncu.search import strategies
from pragma_ncu.search.autotune import time_to_within, tune_parameters
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.output import write_results
from pragma_ncu.search.results import Budget, Evaluation, Retest, SearchResult, ShapeTime
from pragma_ncu.search.serial import Problem, choose_strategy
from pragma_ncu.search.space import Point, Space, point_key
from pragma_ncu.search.strategies import Exhaustive, OptunaStrategy
from tests.fakes.replay import ReplayEvaluator, load_recording
from tests.fakes.tuner import H200_LIMITS, measurement, synthetic_recording, synthetic_spec

BEST = "BLOCK=256,ROWS=1,VEC=8"


def _setup(tmp: Path, fails=lambda p: None, registers=lambda p: 32, jitter: float = 0.0):
    spec = synthetic_spec(tmp)
    space = Space.from_spec(spec)
    recording = synthetic_recording(space, ("big", "small"), fails=fails, registers=registers)
    evaluator = ReplayEvaluator(recording, H200_LIMITS, jitter_pct=jitter, seed=1)
    return Problem(spec, spec.shapes, space), evaluator


def _run(problem: Problem, evaluator: ReplayEvaluator, **options) -> SearchResult:
    return tune_parameters(problem, evaluator, SearchOptions(**options), clock=evaluator.clock)


def test_exhaustive_search_finds_the_best_point_and_counts_the_pruned(tmp_path: Path) -> None:
    problem, evaluator = _setup(tmp_path)
    result = _run(problem, evaluator, strategy="auto", budget=Budget(evaluations=500))
    assert result.strategy == "exhaustive"
    assert result.evaluations[0].point == {"BLOCK": 256, "VEC": 1, "ROWS": 1}  # incumbent first
    assert result.stats.pruned == {"threads_per_block": 12}  # BLOCK=2048, never compiled
    assert result.stats.evaluated == result.stats.verified == 72
    assert evaluator.builds == 72
    assert result.general.accepted and point_key(result.general.winner.point) == BEST
    assert result.general.speedup == pytest.approx(1.9, rel=0.01)
    assert result.best_point == {"BLOCK": 256, "VEC": 8, "ROWS": 1}
    for shape, verdict in result.per_shape:
        assert verdict.accepted and point_key(verdict.winner.point) == BEST, shape


def test_failed_points_never_win_and_are_counted_by_status(tmp_path: Path) -> None:
    def fails(p):  # the fastest point gives a wrong answer; another does not compile
        if p == {"BLOCK": 256, "VEC": 8, "ROWS": 1}:
            return "wrong_answer"
        return "compile_error" if p == {"BLOCK": 128, "VEC": 8, "ROWS": 1} else None
    problem, evaluator = _setup(tmp_path, fails=fails)
    result = _run(problem, evaluator, strategy="exhaustive", budget=Budget(evaluations=500))
    assert result.stats.failed == {"wrong_answer": 1, "compile_error": 1}
    keys = {r.key for r in result.retests}
    assert BEST not in keys and "BLOCK=128,ROWS=1,VEC=8" not in keys
    assert result.general.winner.key == "BLOCK=256,ROWS=2,VEC=8"  # the next best
    assert all(r.status == "ok" for r in result.retests)


def test_a_candidate_failing_the_retest_is_out(tmp_path: Path) -> None:
    problem, evaluator = _setup(tmp_path)

    calls = {"n": 0}
    real = evaluator.measure

    def measure(point, built, shape, phase):
        m = real(point, built, shape, phase)
        if phase == "retest" and point_key(point) == BEST:
            calls["n"] += 1
            return replace(m, status=Status.WRONG_ANSWER, message="fresh inputs failed",
                           timing=None)
        return m
    evaluator.measure = measure  # type: ignore[method-assign]
    result = _run(problem, evaluator, strategy="exhaustive", budget=Budget(evaluations=500))
    failed = next(r for r in result.retests if r.key == BEST)
    assert failed.status == "wrong_answer" and calls["n"] == 1  # not measured again
    assert result.general.winner.key != BEST and result.general.accepted


def test_registers_that_cannot_launch_are_pruned_after_compiling(tmp_path: Path) -> None:
    problem, evaluator = _setup(tmp_path, registers=lambda p: 128 if p["VEC"] == 8 else 32)
    result = _run(problem, evaluator, strategy="exhaustive", budget=Budget(evaluations=500))
    # 128 registers x 1024 threads exceed the 64 K registers of a block (x 512 just fits)
    assert result.stats.pruned == {"threads_per_block": 12, "registers": 3}
    assert result.stats.evaluated == 72 - 3
    assert result.general.winner.key == BEST


def test_the_evaluation_budget_bounds_the_search(tmp_path: Path) -> None:
    problem, evaluator = _setup(tmp_path)
    result = _run(problem, evaluator, strategy="exhaustive", budget=Budget(evaluations=10))
    assert result.stats.evaluated == 10 and evaluator.builds <= 10


def test_the_time_budget_bounds_the_search(tmp_path: Path) -> None:
    problem, evaluator = _setup(tmp_path)
    # each replayed point costs 0.2 s of GPU time and 1 s of compile on one job
    result = _run(problem, evaluator, strategy="exhaustive", budget=Budget(seconds=12.0))
    assert 5 <= result.stats.evaluated <= 12


def test_tpe_finds_a_near_best_point_within_a_third_of_the_space(tmp_path: Path) -> None:
    problem, evaluator = _setup(tmp_path)
    result = _run(problem, evaluator, strategy="tpe", seed=3, budget=Budget(evaluations=24))
    assert result.strategy == "tpe" and result.stats.evaluated == 24
    keys = [e.key for e in result.evaluations if e.status != "infeasible"]
    assert len(keys) == len(set(keys))  # no point measured twice
    best = result.general.winner.objective
    assert best is not None and best <= 1.10 * 33.87  # within 10% of the optimum's geo-mean


def test_tpe_is_reproducible_with_its_seed(tmp_path: Path) -> None:
    runs = []
    for _ in range(2):
        problem, evaluator = _setup(tmp_path)
        result = _run(problem, evaluator, strategy="tpe", seed=7, budget=Budget(evaluations=15))
        runs.append([e.key for e in result.evaluations])
    assert runs[0] == runs[1]


def test_auto_uses_tpe_when_the_space_exceeds_the_budget(tmp_path: Path) -> None:
    problem, evaluator = _setup(tmp_path)
    result = _run(problem, evaluator, strategy="auto", budget=Budget(evaluations=30))
    assert result.strategy == "tpe"


def test_optuna_strategy_never_proposes_a_point_twice(tmp_path: Path) -> None:
    space = Space.from_spec(synthetic_spec(tmp_path))
    strategy = OptunaStrategy(space, "random", seed=0)
    seen = set()
    while True:
        batch = strategy.ask(8)
        if not batch:
            break
        for point in batch:
            key = point_key(point)
            assert key not in seen
            seen.add(key)
            strategy.tell(point, None if point["BLOCK"] == 32 else 1.0)
    assert len(seen) == space.size  # it ran dry only when every point had been proposed


@pytest.mark.parametrize("parallel", [False, True])
def test_a_settled_sampler_still_reaches_every_point_for_a_bounded_number_of_proposals(
        tmp_path: Path, parallel: bool) -> None:
    """TPE on a smooth landscape settles and re-proposes its best points; each new point then
    costs at most FILL_AFTER_DUPLICATES + 1 proposals (an unseen point is put to it), so
    covering the space stays cheap, and once every point is out, asking costs nothing."""
    from pragma_ncu.search.strategies import FILL_AFTER_DUPLICATES

    space = Space.from_spec(synthetic_spec(tmp_path))
    strategy = OptunaStrategy(space, "tpe", seed=1, parallel=parallel)
    seen: list[str] = []
    while batch := strategy.ask(4 if parallel else 1):
        for point in batch:
            seen.append(point_key(point))
            strategy.tell(point, 1.0 + 0.01 * int(point["BLOCK"]) / int(point["VEC"]))
    assert len(seen) == len(set(seen)) == space.size
    trials = len(strategy.study.trials)
    assert space.size < trials <= space.size * (FILL_AFTER_DUPLICATES + 1)
    assert strategy.ask(8) == [] and len(strategy.study.trials) == trials


def test_exhaustive_strategy_asks_in_order() -> None:
    strategy = Exhaustive(iter([{"A": 1}, {"A": 2}, {"A": 3}]))
    assert strategy.ask(2) == [{"A": 1}, {"A": 2}]
    assert strategy.ask(5) == [{"A": 3}] and strategy.ask(1) == []


def _retest(key_vec: int, median: float, noise: float, incumbent: bool = False,
            status: str = "ok", rounds: tuple[float, ...] = ()) -> Retest:
    shapes = ((ShapeTime("big", median, noise, rounds or (median, median)),)
              if status == "ok" else ())
    return Retest({"VEC": key_vec}, status, shapes=shapes, is_incumbent=incumbent)


def test_a_winner_within_the_margin_or_the_rounds_noise_does_not_replace_the_incumbent() -> None:
    """Recorded re-tests keep no samples: the rounds' medians decide. A 0.8% gain is inside
    the 1% margin; a 3% gain is taken when the rounds agree, and not when they disagree."""
    inc = _retest(1, 100.0, 1.0, incumbent=True)
    close = _retest(8, 99.2, 1.0)
    verdict = retesting.decide([inc, close])
    assert verdict.winner is close and not verdict.accepted
    assert "not faster by the 1% margin" in verdict.reason
    assert retesting.decide([inc, _retest(8, 97.0, 1.0)]).accepted
    torn = retesting.decide([inc, _retest(8, 97.0, 2.0, rounds=(94.0, 100.0))])
    assert not torn.accepted and torn.undecided and "too noisy to decide" in torn.reason


def test_the_incumbent_winning_is_not_a_new_best() -> None:
    inc = _retest(1, 90.0, 1.0, incumbent=True)
    verdict = retesting.decide([inc, _retest(8, 95.0, 1.0)])
    assert verdict.winner is inc and not verdict.accepted and verdict.speedup == 1.0


def test_an_unverified_incumbent_is_replaced_by_any_verified_winner() -> None:
    inc = _retest(1, 0.0, 0.0, incumbent=True, status="wrong_answer")
    verdict = retesting.decide([inc, _retest(8, 120.0, 1.0)])
    assert verdict.accepted and verdict.winner.point == {"VEC": 8}


def test_time_to_within_uses_the_running_best() -> None:
    def ev(i: int, elapsed: float, us: float | None) -> Evaluation:
        ms = (measurement("big", us),) if us is not None else ()
        return Evaluation(i, {"A": i}, "ok" if us else "wrong_answer", measurements=ms,
                          elapsed_s=elapsed)
    evs = [ev(0, 1.0, 100.0), ev(1, 2.0, None), ev(2, 3.0, 80.0), ev(3, 4.0, 79.0),
           ev(4, 5.0, 78.0)]
    assert time_to_within(evs, 0.02) == 4.0  # 79 is within 2% of 78, 80 is not
    assert time_to_within(evs, 0.0) == 5.0
    assert time_to_within(evs[:2], 0.02) == 1.0
    assert time_to_within([ev(0, 1.0, None)], 0.02) is None


def test_results_round_trip_and_replay_the_same_decision(tmp_path: Path) -> None:
    problem, evaluator = _setup(tmp_path, jitter=1.0)
    result = _run(problem, evaluator, strategy="exhaustive", budget=Budget(evaluations=500))
    written = write_results(result, problem.spec, tmp_path / "out")
    data = json.loads(written["results"].read_text())
    assert data["best_point"] == {"BLOCK": 256, "VEC": 8, "ROWS": 1}
    assert len(written["evaluations"].read_text().splitlines()) == len(result.evaluations)
    best_cu = written["best"].read_text()
    assert "#define VEC 8" in best_cu and "#define BLOCK 256" in best_cu
    recorded, meta = load_recording(written["results"])
    again = ReplayEvaluator(recorded, H200_LIMITS)
    replayed = _run(problem, again, strategy="exhaustive", budget=Budget(evaluations=500))
    assert replayed.general.winner.key == result.general.winner.key
    assert meta["kernel"] == "k"


def test_check_shapes_are_verified_not_timed_and_a_failure_there_disqualifies(
        tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path)
    space = Space.from_spec(spec)
    recording = synthetic_recording(space, ("big", "small"))
    wrong = measurement("small", 1.0, Status.UNWRITTEN_OUTPUT)
    recording = [replace(e, measurements=e.measurements[:1],
                         checked=(wrong,) if e.key == BEST else e.measurements[1:])
                 for e in recording]
    evaluator = ReplayEvaluator(recording, H200_LIMITS)
    problem = Problem(spec, spec.shapes[:1], space, check_shapes=spec.shapes[1:])
    result = _run(problem, evaluator, strategy="exhaustive", budget=Budget(evaluations=500))
    best = next(e for e in result.evaluations if e.key == BEST)
    assert best.status == "unwritten_output" and best.objective is None
    assert result.shapes == ("big",)
    assert [s.shape for s in result.general.winner.shapes] == ["big"]
    assert result.general.winner.key != BEST
    other = next(e for e in result.evaluations if e.ok)
    assert [m.shape for m in other.checked] == ["small"]


def test_the_strategy_names_are_listed_once() -> None:
    """search.strategies' registry is what --strategy offers, and docs/tuner.md names each."""
    from pragma_ncu.cli.autotune_cmd import autotune as autotune_command
    from pragma_ncu.cli.tune_cmd import tune as tune_command

    for command in (autotune_command, tune_command):
        option = next(p for p in command.params if p.name == "strategy")
        assert tuple(option.type.choices) == strategies.choices()  # type: ignore[attr-defined]
    assert strategies.choices() == ("auto", *strategies.STRATEGIES)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "tuner.md").read_text()
    assert all(f"`{name}`" in doc or f"--strategy {name}" in doc
               for name in strategies.choices())


def test_an_unknown_strategy_is_an_error_naming_the_registered_ones(tmp_path: Path) -> None:
    problem, _ = _setup(tmp_path)
    for call in (lambda: choose_strategy("annealing", problem, Budget(5), H200_LIMITS, 0),
                 lambda: SearchOptions(strategy="annealing")):
        with pytest.raises(strategies.UnknownStrategy) as caught:
            call()
        assert isinstance(caught.value, InputError)
        assert "'annealing'" in str(caught.value)
        assert all(name in str(caught.value) for name in strategies.choices())


def test_a_strategy_is_one_class_and_one_registry_line(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    class Backwards:
        name = "backwards"

        def __init__(self, space: Space) -> None:
            self.points = list(space.points())[::-1]

        def ask(self, count: int) -> list[Point]:
            out, self.points = self.points[:count], self.points[count:]
            return out

        def tell(self, point: Point, value: float | None) -> None:
            """It does not learn."""

    monkeypatch.setitem(strategies.STRATEGIES, "backwards",
                        lambda space, seed, parallel: Backwards(space))
    assert "backwards" in strategies.choices()
    problem, _ = _setup(tmp_path)
    chosen = choose_strategy("backwards", problem, Budget(5), H200_LIMITS, 0)
    assert chosen.ask(1) == [list(problem.space.points())[-1]]
    assert SearchOptions(strategy="backwards").strategy == "backwards"
