"""`pragma-ncu tune` on a naive C++ kernel, for real, on the machine running the tests: the
system compiler, the CPU worker, and cachegrind as the collector (forced, as on any machine
whose hardware counters cannot be read). The trace must cite the collected metrics."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "cpu" / "conv1d.cpp"
pytestmark = pytest.mark.skipif(
    not (shutil.which("c++") or shutil.which("g++")) or not shutil.which("valgrind"),
    reason="needs a C++ compiler and valgrind")


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("cpu-tune")
    env = {"PRAGMA_NCU_CACHE": str(tmp / "cache"),
           "PRAGMA_NCU_PERF": str(tmp / "no-perf-here"),  # the fallback, whatever the CPU
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    store = tmp / "runs.sqlite"
    res = CliRunner(env=env).invoke(cli, [
        "tune", "--kernel", str(KERNEL), "--shape", "n64k-k33", "--rounds", "1",
        "--store", str(store), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    trace = CliRunner(env=env).invoke(cli, ["trace", data["run"], "--store", str(store),
                                            "--format", "json"])
    assert trace.exit_code == 0, trace.output
    md = CliRunner(env=env).invoke(cli, ["trace", data["run"], "--store", str(store)])
    assert md.exit_code == 0, md.output
    return {"run": data, "trace": json.loads(trace.stdout), "md": md.stdout}


def test_tune_makes_the_naive_kernel_faster_beyond_noise(tuned: dict) -> None:
    """Timed for real on a shared host: the round's candidate is accepted (some 4x to 14x
    faster), or, where the host's noise swamps even that, the round says it was too noisy to
    decide and the best stays; never rejected, and never a red CI from noise (issue 35)."""
    summary = tuned["run"]["summary"]
    rounds = tuned["run"]["rounds"]
    decision = rounds[1]["decision"]
    best = rounds[-1]["best_after"]
    if decision["outcome"] == "undecided":
        assert "too noisy to decide" in decision["reason"] and not decision["accepted"]
        assert best["params"] == rounds[0]["best_after"]["params"]
        return
    assert decision["accepted"], decision["reason"]
    assert summary["speedup"] > 1.5, summary
    assert best["verified"] and best["params"] != rounds[0]["best_after"]["params"]


def test_the_profile_says_it_was_simulated_by_cachegrind(tuned: dict) -> None:
    for r in tuned["run"]["rounds"]:
        state = r["best_after"]
        assert state["profiler"].startswith("cachegrind (simulated"), state["profiler"]
        assert state["metrics"]["Ir"] > 0 and "D1mr" in state["metrics"]
        assert state["classification"] in ("retiring", "backend_memory", "bad_speculation",
                                           "frontend_bound")
    assert "cachegrind" in tuned["md"]


def test_every_decision_cites_the_collected_metrics(tuned: dict) -> None:
    for r in tuned["run"]["rounds"]:
        d = r["decision"]
        stated = {m for b in d["analysis"] for m in b["values"]}
        cited = {c["metric"] for c in d["citations"]}
        collected = set(r["best_after"]["metrics"])
        assert stated & collected, "a decision states collected metric values"
        assert (stated & collected) <= cited, sorted((stated & collected) - cited)
        assert any(c["source"].startswith("https://valgrind.org") for c in d["citations"])
