"""Many GPUs, simulated: real worker processes (the fake worker) pinned to fake GPUs, driven by
the parallel search. Scheduling, the GPU recorded per point, re-tests on one GPU, dead and hung
workers replaced, a failing GPU dropped, no finished point lost, models not mixed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pragma_ncu.infra.errors import NoGPUError
from pragma_ncu.pool.workers import PoolError, same_uuid
from pragma_ncu.search.autotune import tune_parameters
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.parallel import PooledEvaluator
from pragma_ncu.search.results import Budget, SearchResult
from pragma_ncu.search.serial import Problem
from pragma_ncu.search.space import Space, point_key
from tests.fakes.pool import FakeGpu, FakeGpuEvaluator, fake_pool
from tests.fakes.tuner import synthetic_spec

BEST = "BLOCK=256,ROWS=1,VEC=8"
FEASIBLE = 72  # BLOCK=2048 (12 points) is pruned before compiling


def _problem(tmp: Path, one_shape: bool = False) -> Problem:
    spec = synthetic_spec(tmp)
    shapes = spec.shapes[:1] if one_shape else spec.shapes
    return Problem(spec, tuple(shapes), Space.from_spec(spec))


def _tune(problem: Problem, pool, modes=lambda p: "ok", **options) -> SearchResult:
    evaluator = PooledEvaluator(pool, lambda lane: FakeGpuEvaluator(lane.runner, modes))
    opts = {"strategy": "exhaustive", "budget": Budget(evaluations=500), "jobs": 2, **options}
    return tune_parameters(problem, evaluator, SearchOptions(**opts))


def _measured(result: SearchResult) -> list:
    return [e for e in result.evaluations if e.status != "infeasible"]


def test_every_gpu_measures_each_point_records_its_gpu_and_one_gpu_retests(
        tmp_path: Path) -> None:
    log = tmp_path / "requests.log"
    gpus = [FakeGpu("GPU-aaaa", delay_s=0.01), FakeGpu("GPU-bbbb", delay_s=0.01)]
    with fake_pool(tmp_path, gpus, log=log).start() as pool:
        result = _tune(_problem(tmp_path), pool)
    measured = _measured(result)
    assert len(measured) == FEASIBLE and all(e.ok for e in measured)
    assert sorted(e.key for e in measured) == sorted({e.key for e in measured})  # each once
    by_gpu = {e.device.label for e in measured}
    assert by_gpu == {"gpu0", "gpu1"}
    assert {e.device.uuid for e in measured} == {"GPU-aaaa", "GPU-bbbb"}
    assert result.general.winner is not None and result.general.winner.key == BEST
    assert result.retest_device is not None and result.retest_device.label == "gpu0"
    lines = [ln.split() for ln in log.read_text().splitlines()]
    retest = [uuid for uuid, seeds in lines if seeds == "3,4"]
    assert retest and set(retest) == {"GPU-aaaa"}  # every re-test measurement on gpu0
    assert {w.label: w.evaluated for w in result.workers} == {
        "gpu0": sum(e.device.label == "gpu0" for e in measured),
        "gpu1": sum(e.device.label == "gpu1" for e in measured)}
    assert result.to_json()["workers"][0]["label"] == "gpu0"
    assert result.to_json()["evaluations"][1]["device"]["uuid"] in ("GPU-aaaa", "GPU-bbbb")


def test_two_gpus_measure_about_twice_the_points_per_second(tmp_path: Path) -> None:
    problem = _problem(tmp_path, one_shape=True)
    rates = []
    for n in (1, 2):
        gpus = [FakeGpu(f"GPU-{i}{n}", delay_s=0.04) for i in range(n)]
        with fake_pool(tmp_path, gpus).start() as pool:
            result = _tune(problem, pool, budget=Budget(evaluations=40))
        assert result.stats.evaluated == 40
        rates.append(result.points_per_s)
    assert rates[1] > 1.6 * rates[0], rates  # sleeping workers: the ideal is 2


def test_a_killed_worker_is_replaced_and_no_point_is_lost(tmp_path: Path) -> None:
    notices: list[str] = []
    gpus = [FakeGpu("GPU-aaaa", delay_s=0.005), FakeGpu("GPU-bbbb", delay_s=0.005, die_at=9)]
    with fake_pool(tmp_path, gpus, notices=notices).start() as pool:
        result = _tune(_problem(tmp_path), pool)
        lanes = {lane.label: lane for lane in pool.lanes}
        assert lanes["gpu1"].runner.restarts == 1 and not lanes["gpu1"].dropped
    measured = _measured(result)
    assert len(measured) == FEASIBLE == len({e.key for e in measured})
    assert all(e.ok for e in measured), [e.status for e in measured if not e.ok]
    assert result.general.winner.key == BEST
    assert any("gpu1: its worker died" in n for n in notices), notices
    gpu1 = next(w for w in result.workers if w.label == "gpu1")
    assert gpu1.deaths == 1 and gpu1.evaluated > 0 and not gpu1.dropped


def test_a_hung_worker_is_killed_replaced_and_its_point_measured_elsewhere(
        tmp_path: Path) -> None:
    gpus = [FakeGpu("GPU-aaaa"), FakeGpu("GPU-bbbb", hang_at=3)]
    start = time.perf_counter()
    with fake_pool(tmp_path, gpus, timeout_s=1.0).start() as pool:
        result = _tune(_problem(tmp_path, one_shape=True), pool)
    assert time.perf_counter() - start < 30
    measured = _measured(result)
    assert len(measured) == FEASIBLE and all(e.ok for e in measured)
    assert next(w for w in result.workers if w.label == "gpu1").deaths == 1


def test_a_gpu_that_keeps_failing_is_dropped_and_the_search_goes_on(tmp_path: Path) -> None:
    notices: list[str] = []
    gpus = [FakeGpu("GPU-aaaa", delay_s=0.02), FakeGpu("GPU-bbbb", broken=True)]
    with fake_pool(tmp_path, gpus, notices=notices).start() as pool:
        result = _tune(_problem(tmp_path, one_shape=True), pool)
        assert [lane.label for lane in pool.live] == ["gpu0"]
    measured = _measured(result)
    assert len(measured) == FEASIBLE and all(e.ok for e in measured)
    assert {e.device.label for e in measured} == {"gpu0"}  # gpu1 finished nothing
    gpu1 = next(w for w in result.workers if w.label == "gpu1")
    assert gpu1.dropped.startswith("3 failures in a row") and gpu1.deaths >= 3
    assert any(n.startswith("gpu1 dropped") for n in notices), notices
    assert result.general.winner.key == BEST


def test_a_point_that_kills_every_worker_is_the_candidates_fault(tmp_path: Path) -> None:
    crashing = {"BLOCK=64,ROWS=1,VEC=1", "BLOCK=64,ROWS=1,VEC=2", "BLOCK=64,ROWS=1,VEC=4"}
    with fake_pool(tmp_path, [FakeGpu("GPU-aaaa"), FakeGpu("GPU-bbbb")]).start() as pool:
        result = _tune(_problem(tmp_path, one_shape=True), pool,
                       modes=lambda p: "crash" if point_key(p) in crashing else "ok")
        assert len(pool.live) == 2  # three crashes in a row, but no device is to blame
    failed = {e.key: e for e in _measured(result) if not e.ok}
    assert set(failed) == crashing
    assert all(e.status == "worker_crash" and "died on it first" in e.message
               for e in failed.values())
    assert result.general.winner.key == BEST


def test_devices_of_two_models_are_refused_with_each_group_named(tmp_path: Path) -> None:
    gpus = [FakeGpu("GPU-aaaa", name="Fake H200"), FakeGpu("GPU-bbbb", name="Fake A100")]
    with pytest.raises(PoolError, match="different models") as err:
        fake_pool(tmp_path, gpus).start()
    assert "Fake H200: gpu0" in str(err.value) and "Fake A100: gpu1" in str(err.value)


def test_a_worker_on_the_wrong_device_is_refused(tmp_path: Path) -> None:
    pool = fake_pool(tmp_path, [FakeGpu("GPU-aaaa"), FakeGpu("GPU-bbbb")])
    pool.lanes[1].slot = type(pool.lanes[1].slot)("gpu1", pool.lanes[1].slot.env, "GPU-cccc")
    with pytest.raises(PoolError, match="not GPU-cccc"):
        pool.start()


def test_a_gpu_whose_worker_does_not_start_is_dropped_at_once(tmp_path: Path) -> None:
    notices: list[str] = []
    gpus = [FakeGpu("GPU-aaaa"), FakeGpu("GPU-bbbb", no_start=True)]
    with fake_pool(tmp_path, gpus, notices=notices).start() as pool:
        assert [lane.label for lane in pool.live] == ["gpu0"]
    assert any("gpu1 dropped: its worker did not start" in n for n in notices)
    with pytest.raises(NoGPUError):
        fake_pool(tmp_path, [FakeGpu("GPU-x", no_start=True)]).start()


def test_uuids_compare_by_their_hex_digits() -> None:
    assert same_uuid("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6",
                     "8932F937D72C4106C12F20BD9FAED9F6")
    assert not same_uuid("GPU-8932f937", "GPU-8932f938") and not same_uuid("", "")


def test_an_interrupt_stops_every_worker_at_once_even_a_hung_one(tmp_path: Path) -> None:
    from pragma_ncu.search.parallel import run_parallel_search
    from pragma_ncu.search.strategies import Exhaustive

    problem = _problem(tmp_path, one_shape=True)
    gpus = [FakeGpu("GPU-aaaa", delay_s=0.01), FakeGpu("GPU-bbbb", hang_at=1)]
    seen: list[str] = []

    def progress(ev, best):  # the user presses Ctrl-C after a few points
        seen.append(ev.key)
        if len(seen) == 5:
            raise KeyboardInterrupt
    with fake_pool(tmp_path, gpus, timeout_s=60).start() as pool:
        evaluator = PooledEvaluator(pool, lambda lane: FakeGpuEvaluator(lane.runner))
        start = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            run_parallel_search(problem, evaluator, Exhaustive(problem.space.points()),
                                Budget(500), jobs=2, progress=progress)
        assert time.perf_counter() - start < 15  # not the hung worker's 60 s timeout
    assert (tmp_path / "GPU-bbbb.hung").is_file()  # gpu1 was hanging when the user pressed it
