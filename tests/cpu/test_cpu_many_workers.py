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
                                          "--no-cache", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def serial(kernel: Path, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _autotune(kernel, env, tmp_path_factory.mktemp("serial"))


def decided(data: dict) -> bool:
    """Whether the search's re-test decided: timed for real on a shared host, the winner is
    accepted, or the re-test says it was too noisy to decide (and the incumbent stays): noise
    never fails CI (issue 35). Anything else fails here."""
    general = data["general"]
    if general["accepted"]:
        return True
    assert general["comparison"]["outcome"] == "undecided", general
    assert "too noisy to decide" in general["reason"], general["reason"]
    return False


def quiet(data: dict) -> bool:
    """Decided on a quiet host: the re-test's noise under 20%. Each point of the search is
    timed once, so on a host loaded by other work two points 1.7x apart can trade places (seen
    on a 2-core machine running other test suites: the Ray run's winner lacked -march=native);
    only a quiet run may be held to the one winner."""
    comparison = data["general"].get("comparison") or {}
    return decided(data) and comparison.get("noise_pct", 100.0) < 20.0


def test_one_worker_finds_the_clear_winner(serial: dict) -> None:
    if quiet(serial):
        assert serial["best_point"] == WINNER
    assert not serial["workers"]  # no pool: the usual single worker


def test_two_local_workers_find_the_same_winner(kernel: Path, env: dict[str, str],
                                                serial: dict, tmp_path: Path) -> None:
    data = _autotune(kernel, env, tmp_path, "--workers", "2")
    if quiet(data) and quiet(serial):
        assert data["best_point"] == serial["best_point"] == WINNER
    measured = [e for e in data["evaluations"] if e["status"] != "infeasible"]
    assert len(measured) == 16 and all(e["status"] == "ok" for e in measured)
    assert {e["device"]["label"] for e in measured} == {"cpu0", "cpu1"}
    assert data["retest_device"]["label"] == "cpu0"
    assert sum(w["evaluated"] for w in data["workers"]) == 16
    assert data["points_per_s"] > 0
    table = json.loads(Path(data["files"]["table"]).read_text())
    assert table["configs"]["n=65536,k=33"]["params"] == data["best_point"]


def test_a_local_ray_cluster_of_two_cpu_workers_finds_the_same_winner(
        kernel: Path, env: dict[str, str], serial: dict, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="the Ray path needs pip install \".[test]\"")
    start = time.perf_counter()
    try:
        data = _autotune(kernel, env, tmp_path, "--workers", "2", "--ray", "local")
    finally:
        ray.shutdown()
    seconds = time.perf_counter() - start
    if quiet(data) and quiet(serial):
        assert data["best_point"] == serial["best_point"] == WINNER
    measured = [e for e in data["evaluations"] if e["status"] != "infeasible"]
    assert len(measured) == 16 and all(e["status"] == "ok" for e in measured)
    assert {e["device"]["label"] for e in measured} == {"cpu0", "cpu1"}
    assert all(e["device"]["host"] for e in measured)  # the node each actor ran on
    assert seconds < 300, seconds  # no hang (90 s alone; a loaded 2-core host takes longer)


def test_tune_searches_on_both_workers_and_stores_who_measured_what(
        kernel: Path, env: dict[str, str], tmp_path: Path) -> None:
    from pragma_ncu.infra.store import Store

    store = tmp_path / "runs.sqlite"
    res = CliRunner(env={**env, "PRAGMA_NCU_PERF": str(tmp_path / "no-perf")}).invoke(cli, [
        "tune", "--kernel", str(kernel), "--shape", "n64k-k33", "--rounds", "1", "--workers",
        "2", "--store", str(store), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    search = data["rounds"][1]["search"]
    assert search["evaluated"] == 16 and set(search["workers"]) == {"cpu0", "cpu1"}
    assert search["retested_on"] == "cpu0" and search["points_per_s"] > 0
    decision = data["rounds"][1]["decision"]  # faster, or too noisy to decide (never red)
    assert decision["accepted"] or (decision["outcome"] == "undecided" and "too noisy to "
                                    "decide" in decision["reason"]), decision["reason"]
    rows = Store.open(store).candidates(data["run"], 1)
    labels = {m["device"]["label"] for r in rows for m in r.measurements}
    assert labels == {"cpu0", "cpu1"}


def test_per_shape_spreads_the_shapes_and_the_table_loads_back(
        kernel: Path, env: dict[str, str], tmp_path: Path) -> None:
    from pragma_ncu.search.configs import best_config
    from pragma_ncu.search.table import load_table, lookup

    res = CliRunner(env=env).invoke(cli, ["autotune", "--kernel", str(kernel), "--per-shape",
                                          "--workers", "2", "--out", str(tmp_path),
                                          "--format", "json", "--no-cache"])
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


def test_a_vllm_layout_table_of_a_real_run_loads_as_the_servers_load_it(
        kernel: Path, env: dict[str, str], tmp_path: Path) -> None:
    """conv1d's shapes vary in n and k: keyed by n, each k gets a file of its own, and a
    script that looks configs up as vLLM does (tests/vllm_lookup.py) finds each choice."""
    import subprocess
    import sys

    from pragma_ncu.search.configs import best_config
    from pragma_ncu.search.vllm_table import device_part

    args = ["autotune", "--kernel", str(kernel), "--config-format", "vllm", "--out",
            str(tmp_path), "--format", "json", "--no-cache"]
    refused = CliRunner(env=env).invoke(cli, args)
    assert refused.exit_code == 2 and "vary in n, k" in refused.output
    unnamed = CliRunner(env=env).invoke(cli, [*args, "--batch-dim", "n"])
    assert unnamed.exit_code == 2 and "--dim-map" in unnamed.output  # k is neither E nor N
    res = CliRunner(env=env).invoke(cli, [*args, "--batch-dim", "n", "--dim-map", "k=k"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    files = sorted(Path(p).name for role, p in data["files"].items() if role.startswith("table"))
    part = device_part(data["device"])
    assert files == [f"k=17,device_name={part}.json", f"k=33,device_name={part}.json"]
    for name, n, k in (("n64k-k33", 65536, 33), ("odd", 50021, 17)):
        verdict = data["per_shape"][name]
        chosen = verdict["winner" if verdict["accepted"] else "incumbent"]["point"]
        proc = subprocess.run([sys.executable, str(ROOT / "tests" / "vllm_lookup.py"),
                               str(tmp_path / "configs"), "--device-name", data["device"],
                               "--fixed", f"k={k}", "--batch", str(n), "--batch", "1"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        looked = json.loads(proc.stdout)["configs"]
        assert looked[str(n)] == looked["1"] == chosen, name
        assert best_config(tmp_path / "configs", {"n": 7, "k": k},
                           device=data["device"]) == chosen
