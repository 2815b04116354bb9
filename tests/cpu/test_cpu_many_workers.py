"""The CPU example tuned for real by several workers at once: two local worker processes, and two
Ray actors on a local Ray cluster (Ray runs without GPUs), each to the same winner as one
worker alone.

The space is conv1d's with one OpenMP thread per call: on a machine of two cores, a point that
runs two threads while the other worker measures is slowed by it, and the search would rank
it unfairly (docs/tuner.md says so). What remains has one clear winner, 1.7x ahead of the next.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cpu"
WINNER = {"OPT": 3, "NATIVE": True, "FAST_MATH": True, "ACC": 1, "THREADS": 1}
pytestmark = pytest.mark.skipif(not (shutil.which("c++") or shutil.which("g++")),
                                reason="needs a C++ compiler")


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("conv1d")
    for name in ("conv1d.cpp", "reference.py"):
        shutil.copy(EXAMPLE / name, folder / name)
    spec = (EXAMPLE / "conv1d.toml").read_text()
    one_thread = spec.replace("THREADS = { default = 1, values = [1, 2] }",
                              "THREADS = { default = 1, values = [1] }")
    assert one_thread != spec
    (folder / "conv1d.toml").write_text(one_thread)
    return folder / "conv1d.cpp"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("cache")
    return {"PRAGMA_NCU_CACHE": str(tmp), "RAY_USAGE_STATS_ENABLED": "0",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _autotune(kernel: Path, env: dict[str, str], out: Path, *extra: str) -> dict:
    res = CliRunner(env=env).invoke(cli, ["autotune", "--kernel", str(kernel), "--shape",
                                          "n64k-k33", "--out", str(out), "--format", "json",
                                          *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def serial(kernel: Path, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _autotune(kernel, env, tmp_path_factory.mktemp("serial"))


def test_one_worker_finds_the_clear_winner(serial: dict) -> None:
    assert serial["best_point"] == WINNER
    assert serial["general"]["accepted"]
    assert not serial["workers"]  # no pool: the usual single worker


def test_two_local_workers_find_the_same_winner(kernel: Path, env: dict[str, str],
                                                serial: dict, tmp_path: Path) -> None:
    data = _autotune(kernel, env, tmp_path, "--workers", "2")
    assert data["best_point"] == serial["best_point"] == WINNER
    measured = [e for e in data["evaluations"] if e["status"] != "infeasible"]
    assert len(measured) == 16 and all(e["status"] == "ok" for e in measured)
    assert {e["device"]["label"] for e in measured} == {"cpu0", "cpu1"}
    assert data["retest_device"]["label"] == "cpu0"
    assert sum(w["evaluated"] for w in data["workers"]) == 16
    assert data["points_per_s"] > 0
    table = json.loads(Path(data["files"]["table"]).read_text())
    assert table["configs"]["n=65536,k=33"]["params"] == WINNER


def test_a_local_ray_cluster_of_two_cpu_workers_finds_the_same_winner(
        kernel: Path, env: dict[str, str], serial: dict, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="the Ray path needs pip install \".[test]\"")
    start = time.perf_counter()
    try:
        data = _autotune(kernel, env, tmp_path, "--workers", "2", "--ray", "local")
    finally:
        ray.shutdown()
    seconds = time.perf_counter() - start
    assert data["best_point"] == serial["best_point"] == WINNER
    measured = [e for e in data["evaluations"] if e["status"] != "infeasible"]
    assert len(measured) == 16 and all(e["status"] == "ok" for e in measured)
    assert {e["device"]["label"] for e in measured} == {"cpu0", "cpu1"}
    assert all(e["device"]["host"] for e in measured)  # the node each actor ran on
    assert seconds < 90, seconds


def test_tune_searches_on_both_workers_and_stores_who_measured_what(
        kernel: Path, env: dict[str, str], tmp_path: Path) -> None:
    from pragma_ncu.store import Store

    store = tmp_path / "runs.sqlite"
    res = CliRunner(env={**env, "PRAGMA_NCU_PERF": str(tmp_path / "no-perf")}).invoke(cli, [
        "tune", "--kernel", str(kernel), "--shape", "n64k-k33", "--rounds", "1", "--workers",
        "2", "--store", str(store), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    search = data["rounds"][1]["search"]
    assert search["evaluated"] == 16 and set(search["workers"]) == {"cpu0", "cpu1"}
    assert search["retested_on"] == "cpu0" and search["points_per_s"] > 0
    assert data["rounds"][1]["decision"]["accepted"]
    rows = Store.open(store).candidates(data["run"], 1)
    labels = {m["device"]["label"] for r in rows for m in r.measurements}
    assert labels == {"cpu0", "cpu1"}


def test_per_shape_spreads_the_shapes_and_the_table_loads_back(
        kernel: Path, env: dict[str, str], tmp_path: Path) -> None:
    from pragma_ncu.search.table import best_config, load_table, lookup

    res = CliRunner(env=env).invoke(cli, ["autotune", "--kernel", str(kernel), "--per-shape",
                                          "--workers", "2", "--out", str(tmp_path),
                                          "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data["shapes"]) == {"n64k-k33", "odd"}
    tuned_on = set()
    for name, r in data["shapes"].items():
        devices = {e["device"]["label"] for e in r["evaluations"] if e.get("device")}
        assert len(devices) == 1 and r["retest_device"]["label"] in devices, name
        tuned_on |= devices
        assert r["shapes"] == [name] and (tmp_path / name / "results.json").is_file()
    assert tuned_on == {"cpu0", "cpu1"}  # one shape each, at once
    table = Path(data["table"])
    assert table.parent.name == "conv1d" and table.parent.parent == tmp_path / "configs"
    for name, r in data["shapes"].items():
        dims = {"n": 65536, "k": 33} if name == "n64k-k33" else {"n": 50021, "k": 17}
        verdict = r["per_shape"][name]
        chosen = verdict["winner" if verdict["accepted"] else "incumbent"]["point"]
        assert best_config(table, dims) == chosen, name
    entry, exact = lookup(load_table(table), {"n": 60000, "k": 31})
    assert not exact and entry.shape == "n64k-k33"
