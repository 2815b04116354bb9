"""`pragma-ncu autotune` end to end with real nvcc builds and a stand-in GPU worker."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]
FAKE_WORKER = ROOT / "tests" / "fakes" / "fake_worker.py"


def _fake_python(tmp: Path, *flags: str) -> str:
    """An 'interpreter' that runs the fake worker whatever module it is asked to run."""
    script = tmp / "fake-python"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE_WORKER} {' '.join(flags)}\n")
    script.chmod(0o755)
    return str(script)


def _invoke(tmp: Path, *args: str, gpu: bool = True):  # type: ignore[no-untyped-def]
    env = {"PRAGMA_NCU_CACHE": str(tmp / "cache"),
           "PRAGMA_NCU_PYTHON": _fake_python(tmp, *(() if gpu else ("--no-gpu",)))}
    return CliRunner().invoke(cli, ["autotune", *args, "--cache", str(tmp / "runs.sqlite")],
                              env=env, catch_exceptions=False)


def test_without_a_gpu_it_says_so_and_exits_3(tmp_path: Path) -> None:
    result = _invoke(tmp_path, "--kernel", str(ROOT / "examples" / "silu_and_mul.cu"),
                     gpu=False)
    assert result.exit_code == 3
    assert "no GPU" in result.output and "doctor" in result.output


def test_a_spec_without_candidates_is_a_clear_error(tmp_path: Path) -> None:
    src = (ROOT / "examples" / "silu_and_mul.toml").read_text()
    spec = tmp_path / "silu_and_mul.toml"
    spec.write_text(src.replace("BLOCK = { default = 256, values = [64, 128, 256, 512, 1024] }",
                                "BLOCK = 256"))
    (tmp_path / "silu_and_mul.cu").write_text((ROOT / "examples" / "silu_and_mul.cu").read_text())
    shutil.copy(ROOT / "examples" / "reference.py", tmp_path)  # the spec's reference
    result = _invoke(tmp_path, "--kernel", str(tmp_path / "silu_and_mul.cu"))
    assert result.exit_code == 2 and "declares no parameter" in result.output


def test_equal_times_keep_the_incumbent_and_the_best_kernel_compiles(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _invoke(tmp_path, "--kernel", str(ROOT / "examples" / "silu_and_mul.cu"),
                     "--shape", "odd", "--out", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert data["stats"]["evaluated"] == 5 and data["stats"]["verified"] == 5
    assert data["general"]["accepted"] is False  # every point took the same 10 µs
    assert data["best_point"] == {"BLOCK": 256}
    best = Path(data["files"]["best"])
    assert best.is_file() and "#define BLOCK 256" in best.read_text()
    nvcc = os.environ.get("PRAGMA_NCU_NVCC", "nvcc")
    proc = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-o", str(tmp_path / "b.cubin"),
                           str(best)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = (out / "evaluations.jsonl").read_text().splitlines()
    assert len(lines) == 5 and json.loads(lines[0])["point"] == {"BLOCK": 256}


def test_the_table_reports_where_the_points_went(tmp_path: Path) -> None:
    result = _invoke(tmp_path, "--kernel", str(ROOT / "examples" / "silu_and_mul.cu"),
                     "--shape", "odd", "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert "space 5 points; strategy exhaustive" in result.output
    assert "keep incumbent" in result.output and "best:" in result.output
