"""`pragma-ncu triage` on two versions of a C++ kernel, measured and profiled now on the CPU:
the slower one is a regression beyond noise (exit 1), or too noisy to decide on a loaded host
(exit 0), explained by the simulated counts either way."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    not (shutil.which("c++") or shutil.which("g++")) or not shutil.which("valgrind"),
    reason="needs a C++ compiler and valgrind")


def test_a_register_accumulator_lost_is_a_regression_with_its_evidence(tmp_path: Path) -> None:
    original = (ROOT / "examples" / "cpu" / "conv1d.cpp").read_text()
    assert "#if ACC" in original
    base = tmp_path / "conv1d_base.cpp"
    base.write_text(original.replace("#if ACC", "#if 1"))  # the fast version
    new = tmp_path / "conv1d_new.cpp"
    new.write_text(original.replace("#if ACC", "#if 0"))  # y[i] += ... in memory again
    env = {"PRAGMA_NCU_CACHE": str(tmp_path / "cache"),
           "PRAGMA_NCU_PERF": str(tmp_path / "no-perf-here"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    res = CliRunner(env=env).invoke(cli, [
        "triage", str(base), str(new), "--spec", str(ROOT / "examples" / "cpu" / "conv1d.toml"),
        "--param", "OPT=3", "--param", "FAST_MATH=true",  # the fast side vectorizes
        "--out", str(tmp_path / "out"), "--format", "json", "--repeat", "3"])
    report = json.loads(res.stdout)
    (k,) = report["kernels"]
    d = k["duration"]
    # Timed for real on a shared host: the new version is slower (+49% on the dev VM, +91% on a
    # CI run, +102% under load), but a loaded host can swamp any difference (noise of 627% was
    # seen). The claim is a regression beyond noise, or "too noisy to decide" with a gate that
    # passes; never unchanged or an improvement, and never a red CI from noise (issue 35).
    if d["verdict"] == "undecided":
        assert res.exit_code == 0, res.output
        assert "too noisy to decide" in d["note"] and d["ci_high_pct"] > 20, d
    else:
        assert res.exit_code == 1, res.output
        assert d["verdict"] == "regression" and d["delta_pct"] > 20, d
    assert report["device_word"] == "CPU" and report["totals"]["base_us"] > 0
    assert k["base"]["median_us"] == d["base_us"] and k["new"]["median_us"] == d["new_us"]
    moved = {m["metric"] for m in k["metrics"]}
    assert "Dw" in moved or "Ir" in moved, moved  # the stores (and instructions) came back
    assert (tmp_path / "out").is_dir()
