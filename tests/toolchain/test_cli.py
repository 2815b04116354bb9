"""The command line, end to end, with every GPU hidden (so it behaves the same in CI and on a
GPU machine): bench builds, says clearly that no GPU is present, and bad input is a clear error."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


@pytest.fixture
def run(tmp_path: Path):  # type: ignore[no-untyped-def]
    env = {**NO_GPU, "PRAGMA_NCU_CACHE": str(tmp_path / "cache")}

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return invoke


def test_bench_without_gpu_builds_and_says_so(run) -> None:  # type: ignore[no-untyped-def]
    result = run("bench", "--kernel", str(ROOT / "examples" / "silu_and_mul.cu"))
    assert result.exit_code == 0, result.output
    assert "registers" in result.output
    assert "no GPU" in result.output
    assert "pragma-ncu doctor" in result.output


def test_bench_require_gpu_exits_3(run) -> None:  # type: ignore[no-untyped-def]
    result = run("bench", "--kernel", str(ROOT / "examples" / "softmax.cu"), "--require-gpu")
    assert result.exit_code == 3


def test_bench_json_without_gpu(run) -> None:  # type: ignore[no-untyped-def]
    result = run("bench", "--kernel", str(ROOT / "examples" / "transpose.cu"), "--format", "json")
    data = json.loads(result.output)
    assert data["kernel"] == "transpose" and data["device"] is None and data["no_gpu"]
    assert data["build"]["status"] == "ok" and data["build"]["resources"]["registers"] > 0


def test_bench_compile_error_shows_compiler_message(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "broken.cu"
    spec = (ROOT / "examples" / "faults" / "scale.toml").read_text().replace(
        'name = "scale"', 'name = "broken"').replace('reference.py:scale', 'ref.py:scale')
    src.write_text('extern "C" __global__ void broken(const float* x, float* y, int n) { y = ; }')
    (tmp_path / "broken.toml").write_text(spec)
    shutil.copy(ROOT / "examples" / "faults" / "reference.py", tmp_path / "ref.py")
    result = run("bench", "--kernel", str(src))
    assert result.exit_code == 1
    assert "compile_error" in result.output and "expected an expression" in result.output


def test_bench_kernel_not_found_names_entries(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void other(const float* x, float* y, int n) {}')
    spec = (ROOT / "examples" / "faults" / "scale.toml").read_text()
    (tmp_path / "k.toml").write_text(spec)
    result = run("bench", "--kernel", str(src))
    assert result.exit_code != 0  # bad input (2 with the exit-code contract of issue 25)
    assert "no kernel named scale in k.cu (it defines: other)" in result.output


def test_bad_spec_names_the_field(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "k.cu"
    src.write_text("")
    (tmp_path / "k.toml").write_text(
        (ROOT / "examples" / "faults" / "scale.toml").read_text().replace('"fp32"', '"fp17"', 1))
    result = run("bench", "--kernel", str(src))
    assert result.exit_code == 2  # bad input
    assert "args[0].dtype" in result.output and "fp16" in result.output
    assert "Traceback" not in result.output


def test_missing_kernel_and_unknown_shape(run) -> None:  # type: ignore[no-untyped-def]
    missing = run("bench", "--kernel", "nowhere/foo.cu")
    assert missing.exit_code == 2 and "kernel file not found" in missing.output
    shape = run("bench", "--kernel", str(ROOT / "examples" / "silu_and_mul.cu"),
                "--shape", "llama-9000")
    assert shape.exit_code == 2 and "llama-7b" in shape.output


def test_ad_hoc_shape_and_param(run) -> None:  # type: ignore[no-untyped-def]
    result = run("bench", "--kernel", str(ROOT / "examples" / "silu_and_mul.cu"),
                 "--shape", "T=8,d=100", "--param", "BLOCK=128", "--format", "json")
    data = json.loads(result.output)
    assert data["params"] == {"BLOCK": 128}
    assert ["-DBLOCK=128" in c for c in data["build"]["command"]].count(True) == 1


def test_doctor_json_lists_checks(run) -> None:  # type: ignore[no-untyped-def]
    result = run("doctor", "--no-profile-check", "--format", "json")
    checks = {c["name"]: c for c in json.loads(result.output)}
    assert checks["nvcc"]["ok"] and not checks["GPU"]["ok"] and checks["GPU"]["fix"]


def test_python_dash_m_and_help_on_every_command() -> None:
    for args in ([], ["bench"], ["doctor"]):
        out = subprocess.run([sys.executable, "-m", "pragma_ncu", *args, "--help"],
                             capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert out.returncode == 0 and "Usage:" in out.stdout
