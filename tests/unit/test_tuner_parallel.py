"""Batch proposals for many workers, and shapes tuned each on its own, spread over workers."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.infra.progress import Advance, Begin, End, Event, Note
from pragma_ncu.search.autotune import tune_parameters
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.parallel import PooledEvaluator
from pragma_ncu.search.per_shape import tune_each_shape
from pragma_ncu.search.results import Budget
from pragma_ncu.search.serial import Problem, choose_strategy
from pragma_ncu.search.space import Space, point_key
from pragma_ncu.search.strategies import Exhaustive, OptunaStrategy
from tests.fakes.pool import FakeGpu, FakeGpuEvaluator, fake_pool
from tests.fakes.tuner import H200_LIMITS, SPEC_TOML, synthetic_spec

BEST = "BLOCK=256,ROWS=1,VEC=8"


def test_exhaustive_hands_out_the_next_points_in_batches(tmp_path: Path) -> None:
    space = Space.from_spec(synthetic_spec(tmp_path))
    strategy = Exhaustive(space.points())
    batches = [strategy.ask(5) for _ in range(20)]
    flat = [point_key(p) for b in batches for p in b]
    assert [len(b) for b in batches[:16]] == [5] * 16 and len(batches[16]) == 4
    assert flat == [point_key(p) for p in space.points()]


def test_tpe_asks_for_a_batch_of_distinct_points_as_a_constant_liar(tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path)
    problem = Problem(spec, spec.shapes, Space.from_spec(spec))
    strategy = choose_strategy("tpe", problem, Budget(30), H200_LIMITS, seed=3, parallel=True)
    assert isinstance(strategy, OptunaStrategy)
    assert strategy.study.sampler._constant_liar  # optuna's own switch
    seen: set[str] = set()
    for _ in range(6):  # ask a batch, tell it, as workers finishing would
        batch = strategy.ask(4)
        keys = {point_key(p) for p in batch}
        assert len(batch) == 4 and len(keys) == 4 and not keys & seen
        seen |= keys
        for p in batch:
            strategy.tell(p, float(p["BLOCK"]) + p["VEC"])
    serial = choose_strategy("tpe", problem, Budget(30), H200_LIMITS, seed=3)
    assert not serial.study.sampler._constant_liar  # one worker: as before


def test_tpe_on_two_workers_keeps_to_the_budget_and_never_repeats_a_point(
        tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path)
    problem = Problem(spec, spec.shapes[:1], Space.from_spec(spec))
    gpus = [FakeGpu("GPU-aaaa", delay_s=0.005), FakeGpu("GPU-bbbb", delay_s=0.005)]
    with fake_pool(tmp_path, gpus).start() as pool:
        evaluator = PooledEvaluator(pool, lambda lane: FakeGpuEvaluator(lane.runner))
        result = tune_parameters(problem, evaluator, SearchOptions(
            strategy="tpe", budget=Budget(evaluations=24), seed=1, jobs=2))
    measured = [e for e in result.evaluations if e.status != "infeasible"]
    assert result.stats.evaluated == 24 == len(measured) == len({e.key for e in measured})
    assert {e.device.label for e in measured} == {"gpu0", "gpu1"}


def _spec_with_shapes(tmp: Path, n: int):
    shapes = [{"name": f"T{64 << i}", "T": 64 << i, "d": 4096} for i in range(n)]
    return synthetic_spec(tmp, shapes=shapes)


def test_shapes_tuned_each_on_its_own_are_spread_over_the_workers(tmp_path: Path) -> None:
    spec = _spec_with_shapes(tmp_path, 4)
    space = Space.from_spec(spec)
    problems = [Problem(spec, (s,), space) for s in spec.shapes]
    builders: list[FakeGpuEvaluator] = []

    def make(lane):
        builders.append(FakeGpuEvaluator(lane.runner))
        return builders[-1]
    gpus = [FakeGpu("GPU-aaaa", delay_s=0.002), FakeGpu("GPU-bbbb", delay_s=0.002)]
    notices: list[str] = []
    events: list[Event] = []
    with fake_pool(tmp_path, gpus).start() as pool:
        results = tune_each_shape(problems, PooledEvaluator(pool, make),
                                  SearchOptions(strategy="exhaustive", budget=Budget(500),
                                                jobs=2),
                                  lambda p, e, o, n, r: tune_parameters(p, e, o, notice=n,
                                                                        progress=r),
                                  notice=notices.append, progress=events.append)
    assert [r.shapes for r in results] == [(s.name,) for s in spec.shapes]
    used = set()
    for r in results:
        devices = {e.device.label for e in r.evaluations if e.status != "infeasible"}
        assert len(devices) == 1 and r.retest_device.label in devices  # one GPU per shape
        used |= devices
        assert r.general.winner.key == BEST
        assert r.workers[0].label in devices and r.workers[0].evaluated == 72
    assert used == {"gpu0", "gpu1"}
    builds = [k for b in builders for k in b.builds]
    assert len(builds) == len(set(builds)) == 72  # each point compiled once for all shapes
    assert sum("shapes)" in n for n in notices) == 4
    # the shapes are the phase counted (the searches on the workers' threads say nothing)
    assert {type(e) for e in events} == {Begin, Advance, End}
    assert {e.phase for e in events if not isinstance(e, Note)} == {"shapes"}
    last = [e for e in events if isinstance(e, Advance)][-1]
    assert (last.done, last.total) == (4, 4) and sum(w.done for w in last.workers) == 4


def test_fewer_shapes_than_workers_are_tuned_one_after_another_on_all(tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path, shapes=SPEC_TOML["shapes"][:1])
    problems = [Problem(spec, (spec.shapes[0],), Space.from_spec(spec))]
    gpus = [FakeGpu("GPU-aaaa"), FakeGpu("GPU-bbbb")]
    with fake_pool(tmp_path, gpus).start() as pool:
        (result,) = tune_each_shape(
            problems, PooledEvaluator(pool, lambda lane: FakeGpuEvaluator(lane.runner)),
            SearchOptions(strategy="exhaustive", budget=Budget(500), jobs=2),
            lambda p, e, o, n, r: tune_parameters(p, e, o, notice=n, progress=r))
    assert {e.device.label for e in result.evaluations if e.device} == {"gpu0", "gpu1"}
    assert result.retest_device.label == "gpu0"
