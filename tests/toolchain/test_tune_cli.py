"""`pragma-ncu tune` where there is no GPU: it checks the spec, compiles the kernel at its
defaults, says what a run needs and exits 0 (3 with --require-gpu); bad input exits 2 or 1."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.backends.cuda import session
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import NoGPUError
from pragma_ncu.infra.store import Store

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]


class _NoGpu:
    def __init__(self, *args: object, **kwargs: object) -> None:
        raise NoGPUError("no CUDA driver (test)")


@pytest.fixture()
def no_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(session, "CudaSession", _NoGpu)
    monkeypatch.setenv("PRAGMA_NCU_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_without_a_gpu_it_compiles_and_exits_0(no_gpu: Path) -> None:
    kernel = ROOT / "examples" / "templated" / "silu_and_mul.cu"
    res = CliRunner().invoke(cli, ["tune", "--kernel", str(kernel), "--store",
                                   str(no_gpu / "runs.sqlite")])
    assert res.exit_code == 0, res.output
    assert "compiles for sm_90" in res.output and "72 parameter points" in res.output
    res = CliRunner().invoke(cli, ["tune", "--kernel", str(kernel), "--require-gpu",
                                   "--store", str(no_gpu / "runs.sqlite")])
    assert res.exit_code == 3


def test_a_kernel_that_does_not_compile_is_a_clear_error(no_gpu: Path) -> None:
    bad = no_gpu / "bad.cu"
    bad.write_text('extern "C" __global__ void scale(float* y, const float* x, int n)'
                   ' { y[0] = ; }\n')
    spec = (ROOT / "examples" / "faults" / "scale.toml").read_text()
    (no_gpu / "bad.toml").write_text(spec.replace('source = "scale.cu"', 'source = "bad.cu"'))
    shutil.copy(ROOT / "examples" / "faults" / "reference.py", no_gpu)  # the spec's reference
    res = CliRunner().invoke(cli, ["tune", "--kernel", str(bad), "--store",
                                   str(no_gpu / "runs.sqlite")])
    assert res.exit_code == 1 and "does not compile" in res.output
    assert "Traceback" not in res.output


def test_resume_of_an_unknown_run_is_a_clear_error(no_gpu: Path) -> None:
    Store.open(no_gpu / "runs.sqlite").close()
    res = CliRunner().invoke(cli, ["tune", "--resume", "nope", "--store",
                                   str(no_gpu / "runs.sqlite")])
    assert res.exit_code == 2 and "no run 'nope'" in res.output


def test_no_kernel_and_no_resume_is_a_usage_error(no_gpu: Path) -> None:
    res = CliRunner().invoke(cli, ["tune", "--store", str(no_gpu / "runs.sqlite")])
    assert res.exit_code == 2 and "--kernel" in res.output
