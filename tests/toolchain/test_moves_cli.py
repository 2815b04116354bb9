"""`pragma-ncu moves --diff` with nvcc (present in CI): each fitting move's rewrite at its
boldest point is shown as a diff and compiled; on a C++ template kernel too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PRAGMA_NCU_CACHE", str(tmp_path / "cache"))


def test_each_fitting_move_is_shown_and_compiles() -> None:
    kernel = ROOT / "examples" / "moves" / "gamma_lut.cu"
    res = CliRunner().invoke(cli, ["moves", "--kernel", str(kernel), "--diff"])
    assert res.exit_code == 0, res.output
    for move in ("coarsen", "fast_math"):
        assert f"== {move} at its boldest" in res.output, res.output
    assert res.output.count(": compiles") == 2 and "does not compile" not in res.output
    assert "launch there: grid ['ceil_div(ceil_div(n, 256), 16)'], block ['256']" in res.output
    assert "+++ b/gamma_lut.cu" in res.output
    assert "nvcc flags added: -use_fast_math" in res.output


def test_a_template_kernels_moves_compile_and_keep_the_template() -> None:
    kernel = ROOT / "tests" / "fixtures" / "moves" / "templated" / "softplus_rows.cu"
    res = CliRunner().invoke(cli, ["moves", "--kernel", str(kernel), "--diff", "--format",
                                   "json"])
    assert res.exit_code == 0, res.output
    fits = [m for m in json.loads(res.output)["moves"] if m["applies"]]
    assert {m["move"] for m in fits} == {"readonly", "unroll", "fast_math", "cache_policy"}
    assert all(m["compiled"] is True and m["compile_error"] is None for m in fits), fits
    unroll = next(m for m in fits if m["move"] == "unroll")
    assert "+    #pragma unroll 8" in unroll["diff"] and "-template" not in unroll["diff"]
