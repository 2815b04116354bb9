"""Per-GPU calibration before a pool's first search (pool/calibration.py, search/calibrate.py):
every worker times the incumbent at once; a device markedly slower than the others (beyond
10% and the noise) is reported and left out of the search and the re-test. Judged on figures
alone, then on simulated pools of GPUs of planted speeds (tests/fakes/pool.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu.pool.calibration import SLOWER_BY, DeviceFigure, judge
from pragma_ncu.search.autotune import tune_parameters
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.parallel import PooledEvaluator
from pragma_ncu.search.results import Budget, SearchResult
from pragma_ncu.search.serial import Problem
from pragma_ncu.search.space import Space
from tests.fakes.pool import FakeGpu, FakeGpuEvaluator, fake_pool
from tests.fakes.tuner import synthetic_spec
from tests.tools_loader import load_tool

ROOT = Path(__file__).resolve().parents[2]
BEST = "BLOCK=256,ROWS=1,VEC=8"


def _figures(*times: float | None, noise: float = 0.01) -> list[DeviceFigure]:
    return [DeviceFigure(f"gpu{i}", t, noise, "" if t else "worker_crash")
            for i, t in enumerate(times)]


def test_a_device_beyond_the_threshold_and_the_noise_is_excluded() -> None:
    assert judge("k", _figures(100.0, 101.5)).excluded == ()
    two = judge("k", _figures(100.0, 130.0))
    assert two.excluded == ("gpu1",) and two.ratio("gpu1") == pytest.approx(1.3)
    assert two.ratio("gpu0") == pytest.approx(1 / 1.3)  # faster: never excluded
    four = judge("k", _figures(100.0, 99.0, 101.0, 112.0))  # 12% over the others' median
    assert four.excluded == ("gpu3",)
    noisy = judge("k", _figures(100.0, 99.0, 101.0, 112.0, noise=0.07))  # 12% < 7% + 7%
    assert noisy.excluded == () and SLOWER_BY == 0.10
    half = judge("k", _figures(100.0, 100.5, 125.0, 126.0))  # the slow half against the fast
    assert half.excluded == ("gpu2", "gpu3")


def test_a_device_without_a_figure_or_alone_is_never_excluded() -> None:
    missing = judge("k", _figures(100.0, None, 150.0))
    assert missing.excluded == ("gpu2",) and missing.ratio("gpu1") is None
    assert "gpu1 no figure (worker_crash)" in missing.summary()
    assert judge("k", _figures(100.0, None)).excluded == ()
    assert judge("k", _figures(100.0)).relative == ()


def _search(tmp: Path, gpus: list[FakeGpu], notices: list[str], searches: int = 1,
            budget: int = 500) -> list[SearchResult]:
    spec = synthetic_spec(tmp)
    problem = Problem(spec, tuple(spec.shapes[:1]), Space.from_spec(spec))
    options = SearchOptions(strategy="exhaustive", budget=Budget(evaluations=budget), jobs=2)
    with fake_pool(tmp, gpus, notices=notices).start() as pool:
        evaluator = PooledEvaluator(pool, lambda lane: FakeGpuEvaluator(lane.runner))
        return [tune_parameters(problem, evaluator, options, notice=notices.append)
                for _ in range(searches)]


def test_a_slower_gpu_is_reported_and_measures_nothing(tmp_path: Path) -> None:
    notices: list[str] = []
    gpus = [FakeGpu("GPU-aaaa"), FakeGpu("GPU-bbbb", speed=1.3), FakeGpu("GPU-cccc")]
    [result] = _search(tmp_path, gpus, notices)
    cal = result.calibration
    assert cal is not None and cal.excluded == ("gpu1",)
    assert cal.ratio("gpu1") == pytest.approx(1.3, rel=0.01)
    assert cal.kernel == "BLOCK=256,ROWS=1,VEC=1 at big"  # the incumbent at the first shape
    measured = [e for e in result.evaluations if e.device is not None]
    assert measured and {e.device.label for e in measured} == {"gpu0", "gpu2"}
    gpu1 = next(w for w in result.workers if w.label == "gpu1")
    assert gpu1.evaluated == 0 and gpu1.dropped.startswith("calibration: 1.30x the other")
    assert any(n.startswith("calibration on BLOCK=256,ROWS=1,VEC=1 at big: gpu0 ")
               and n.endswith("excluded: gpu1") for n in notices), notices
    assert any(n.startswith("searching") and "on 2 workers" in n for n in notices)
    assert result.general.winner is not None and result.general.winner.key == BEST
    assert result.to_json()["calibration"]["excluded"] == ["gpu1"]


def test_the_first_gpu_slower_moves_the_retest_to_the_next(tmp_path: Path) -> None:
    [result] = _search(tmp_path, [FakeGpu("GPU-aaaa", speed=1.25), FakeGpu("GPU-bbbb")], [],
                       budget=12)
    assert result.calibration is not None and result.calibration.excluded == ("gpu0",)
    assert result.retest_device is not None and result.retest_device.label == "gpu1"


def test_gpus_within_the_threshold_all_search_and_are_calibrated_once(tmp_path: Path) -> None:
    notices: list[str] = []
    gpus = [FakeGpu("GPU-aaaa", delay_s=0.01), FakeGpu("GPU-bbbb", speed=1.04, delay_s=0.01)]
    first, second = _search(tmp_path, gpus, notices, searches=2, budget=16)
    assert first.calibration is not None and first.calibration.excluded == ()
    assert first.calibration.ratio("gpu1") == pytest.approx(1.04, rel=0.01)
    assert second.calibration is first.calibration  # one calibration per pool
    assert sum(n.startswith("calibrating 2 workers") for n in notices) == 1
    assert {e.device.label for e in first.evaluations if e.device} == {"gpu0", "gpu1"}


# --- tools/gpu_calibration_check.sh and its table ---------------------------------------------


def test_the_gpu_check_table_reads_what_autotune_writes(tmp_path: Path, capsys) -> None:
    import json

    out = tmp_path / "out"
    for name, speeds in (("idle", (1.0, 1.01)), ("loaded", (1.0, 1.4))):
        gpus = [FakeGpu(f"GPU-{name}{i}", speed=s) for i, s in enumerate(speeds)]
        (tmp_path / name).mkdir()
        [result] = _search(tmp_path / name, gpus, [], budget=8)
        (out / name).mkdir(parents=True)
        (out / name / "results.json").write_text(json.dumps(result.to_json()))
    summary = load_tool("calibration_summary")
    assert summary.main(["calibration_summary.py", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in printed.splitlines() if line.startswith("| GPU 1")]
    assert [r[1] for r in rows] == ["gpu0", "gpu1"]
    assert rows[0][0] == "GPU 1 shared with a busy process"
    assert rows[1][4] == "1.400" and rows[1][5] == "yes" and rows[1][6] == "0"
    assert rows[0][7] == "yes"  # gpu0 re-tested
    assert "loaded run: excluded gpu1" in printed and "- idle: no GPU excluded: yes" in printed
    (out / "idle" / "results.json").unlink()
    assert summary.main(["calibration_summary.py", str(out)]) == 1


def test_the_gpu_check_runs_a_space_and_an_incumbent_that_exist() -> None:
    import re

    from pragma_ncu.spec.file import load_spec, spec_path_for

    script = (ROOT / "tools" / "gpu_calibration_check.sh").read_text()
    kernel = ROOT / re.search(r"--kernel (\S+)", script).group(1)
    spec = load_spec(spec_path_for(kernel), kernel)
    assert re.search(r"--shape (\S+)", script).group(1) in {s.name for s in spec.shapes}
    incumbent = {**spec.default_params(), **{k: int(v) for k, v in
                                            re.findall(r"--incumbent (\w+)=(\d+)", script)}}
    assert incumbent in list(Space.from_spec(spec).points())
