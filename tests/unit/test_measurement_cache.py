"""The measurement cache of autotune (search/cache.py, issue 36): a rerun measures nothing it
already measured and finds the same winner, an interrupted autotune resumes without measuring
a point twice, and nothing measured on another device, driver, build or spec is reused. On the
toy target (tests/fakes/toy_backend), whose points are measured in this process."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu import api
from pragma_ncu.build.compile import BuildResult
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import exit_status
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.measure.stats import summarize
from pragma_ncu.search.cache import CachedEvaluator, CacheError, MeasurementCache, cached
from pragma_ncu.search.evaluator import CALIBRATE, CHECK, RETEST, SEARCH
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.space import Point
from pragma_ncu.spec.model import Shape
from tests.fakes.toy_backend import KERNELS
from tests.fakes.toy_backend.evaluator import ToyEvaluator

CONTEXT = {"device": "NVIDIA H200, driver 580159", "tool": "0", "spec": "s", "reference": "r"}


@dataclass
class Counting:
    """An evaluator that answers `status` with a time and counts its measurements."""

    status: Status = Status.OK
    limits: Limits = Limits.host()
    calls: list[tuple[str, str]] = field(default_factory=list)

    def build(self, point: Point) -> BuildResult:
        return BuildResult("ok", "k", "k", "/k.cubin", None, "", "sm_90", (), f"b{point}")

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        self.calls.append((str(point), phase))
        timing = summarize([10.0 + len(self.calls)] * 5, mode="model")
        return Measurement(self.status, shape.name, "", (), timing)


SHAPE = Shape("s", {"n": 1024})


def _measure(evaluator, point: Point, phase: str = SEARCH) -> Measurement:
    return evaluator.measure(point, evaluator.build(point), SHAPE, phase)


def _run(path: Path, inner: Counting, context: dict[str, str] = CONTEXT,
         build: BuildResult | None = None) -> list[Measurement]:
    """One run's askings, in order: what a search and its re-test ask of a point."""
    evaluator = CachedEvaluator(inner, MeasurementCache(path), context)
    built = build or evaluator.build({"B": 1})
    asked = [({"B": 1}, SHAPE, SEARCH), ({"B": 2}, SHAPE, SEARCH),
             ({"B": 1}, Shape("t", {"n": 1024}), SEARCH), ({"B": 1}, SHAPE, CHECK),
             ({"B": 1}, SHAPE, RETEST), ({"B": 1}, SHAPE, RETEST)]  # two re-test rounds
    return [evaluator.measure(p, built if p == {"B": 1} else evaluator.build(p), shape, phase)
            for p, shape, phase in asked]


def test_a_rerun_gets_every_measurement_back_in_the_order_it_asks(tmp_path: Path) -> None:
    inner = Counting()
    first = _run(tmp_path / "runs.sqlite", inner)
    assert len(inner.calls) == 6  # the two re-test rounds are two measurements
    assert first[4] != first[5]
    again = _run(tmp_path / "runs.sqlite", inner)  # another run, the same file
    assert again == first and len(inner.calls) == 6  # nothing measured again


def test_nothing_measured_elsewhere_is_reused(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    inner = Counting()
    _run(path, inner)
    for changed in ({"device": "NVIDIA H200, driver 590000"}, {"device": "NVIDIA H100"},
                    {"spec": "s2"}, {"reference": "r2"}, {"tool": "1"}):
        before = len(inner.calls)
        _run(path, inner, {**CONTEXT, **changed})
        assert len(inner.calls) == before + 6, changed  # another driver, device, spec, ...
    before = len(inner.calls)
    _run(path, inner, build=BuildResult("ok", "k", "k", "/k.cubin", None, "", "sm_90", (),
                                        "another nvcc"))
    assert len(inner.calls) == before + 5  # another build of B=1 (toolchain, flags)
    store = MeasurementCache(path)
    evaluator = CachedEvaluator(inner, store, CONTEXT)
    before = len(inner.calls)
    _measure(evaluator, {"B": 1}, CALIBRATE)
    assert len(inner.calls) == before + 1 and store.counts.measured == 0  # never cached
    assert store.size() == 6 * 6 + 5


@pytest.mark.parametrize(("status", "kept"), [
    (Status.OK, True), (Status.WRONG_ANSWER, True), (Status.OUT_OF_BOUNDS_WRITE, True),
    (Status.RUNTIME_ERROR, True), (Status.TIMEOUT, False), (Status.WORKER_CRASH, False),
    (Status.REFERENCE_ERROR, False), (Status.NO_GPU, False)])
def test_only_what_the_point_is_answerable_for_is_kept(tmp_path: Path, status: Status,
                                                       kept: bool) -> None:
    inner = Counting(status)
    for _ in range(2):  # two runs
        _measure(CachedEvaluator(inner, MeasurementCache(tmp_path / "c.sqlite"), CONTEXT),
                 {"B": 1})
    assert len(inner.calls) == (1 if kept else 2)


def test_a_file_that_is_no_cache_is_a_clear_error_and_a_bad_row_is_measured_again(
        tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("these are notes, not a SQLite file\n" * 100)
    with pytest.raises(CacheError, match="cannot open the measurement cache") as info:
        MeasurementCache(bad)
    assert exit_status(info.value) == 2
    store = MeasurementCache(tmp_path / "c.sqlite")
    inner = Counting()
    _measure(CachedEvaluator(inner, store, CONTEXT), {"B": 1})
    with store._db:  # a row this version cannot read
        store._db.execute("UPDATE measurements SET measurement = '{\"status\": \"?\"}'")
    _measure(CachedEvaluator(inner, MeasurementCache(tmp_path / "c.sqlite"), CONTEXT),
             {"B": 1})
    assert len(inner.calls) == 2


def test_without_a_cache_the_evaluator_is_as_it_was() -> None:
    inner = Counting()
    assert cached(inner, None, CONTEXT) is inner


def test_a_rerun_measures_nothing_it_measured_and_finds_the_same_winner(
        toy: None, tmp_path: Path) -> None:
    options = api.AutotuneOptions(strategy="exhaustive", cache=tmp_path / "runs.sqlite",
                                  rounds=2, top_k=3)
    first = api.autotune(KERNELS / "scale.toy", options)
    assert first.cache is not None and first.cache.reused == 0 and first.cache.measured > 7
    second = api.autotune(KERNELS / "scale.toy", options)
    assert second.cache is not None
    assert (second.cache.reused, second.cache.measured) == (first.cache.measured, 0)
    assert second.best_point == first.best_point == {"BLOCK": 32}
    assert second.to_json()["cache"]["measured"] == 0
    fresh = api.autotune(KERNELS / "scale.toy", options.__class__(
        strategy="exhaustive", rounds=2, top_k=3))
    assert fresh.cache is None and fresh.best_point == first.best_point


def test_an_interrupted_autotune_resumes_without_measuring_a_point_twice(
        toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "runs.sqlite"
    measured: list[tuple[str, str, str]] = []
    real = ToyEvaluator.measure
    stop_at: list[int] = []

    def measure(self, point, built, shape, phase):
        if stop_at and len(measured) == stop_at[0]:
            raise KeyboardInterrupt  # Ctrl-C
        measured.append((repr(sorted(point.items())), shape.name, phase))
        return real(self, point, built, shape, phase)

    monkeypatch.setattr(ToyEvaluator, "measure", measure)
    args = ["autotune", "--kernel", str(KERNELS / "scale.toy"), "--strategy", "exhaustive",
            "--out", str(tmp_path / "out"), "--format", "json"]
    fresh = json.loads(CliRunner().invoke(cli, [*args, "--no-cache"]).output)
    every = Counter(measured)  # what an uninterrupted run measures
    measured.clear()
    stop_at.append(5)
    res = CliRunner().invoke(cli, [*args, "--cache", str(cache)])
    assert res.exit_code == 130, res.output
    assert f"the 5 measurements made are in the cache {cache}; the same command resumes" \
        in " ".join(res.output.split())
    stop_at.clear()
    res = CliRunner().invoke(cli, [*args, "--cache", str(cache)])
    assert res.exit_code == 0, res.output
    assert Counter(measured) == every  # each measured once over the two runs, none twice
    data = json.loads(res.output)
    assert data["cache"]["reused"] == 5 and data["cache"]["measured"] == sum(every.values()) - 5
    assert data["best_point"] == fresh["best_point"] == {"BLOCK": 32}


def test_the_cli_keeps_the_cache_in_the_run_store_and_says_what_it_reused(
        toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["autotune", "--kernel", str(KERNELS / "scale.toy"), "--out", "out"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    assert (tmp_path / ".pragma-ncu" / "runs.sqlite").is_file()
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "measurement cache .pragma-ncu/runs.sqlite:" in res.output
    assert "0 measured now" in res.output
    res = CliRunner().invoke(cli, [*args, "--no-cache"])
    assert res.exit_code == 0 and "measurement cache" not in res.output
    tuned = CliRunner().invoke(cli, ["tune", "--kernel", str(KERNELS / "scale.toy"),
                                     "--rounds", "2"])  # the run store beside the cache
    assert tuned.exit_code == 0, tuned.output
    assert CliRunner().invoke(cli, ["trace", "last"]).exit_code == 0
    assert CliRunner().invoke(cli, args).exit_code == 0  # and the cache beside the runs
