"""A kernel of one's own from `init` to a passing `bench` compile by filling only the
placeholders and the reference's body (examples/init/masked_bias_scale.cu: eight arguments of
six types), as docs/own-kernel.md shows; every GPU hidden, so CI and a GPU machine behave
alike."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli
from tests.draft_fill import MASKED_BIAS_SCALE, fill

pytestmark = pytest.mark.toolchain
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "init"
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


def test_init_then_fill_the_placeholders_then_bench_compiles(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(EXAMPLE / "masked_bias_scale.cu", tmp_path)
    monkeypatch.chdir(tmp_path)  # as in docs/own-kernel.md: init names the file as given
    kernel = Path("masked_bias_scale.cu")
    runner = CliRunner()
    env = {**NO_GPU, "PRAGMA_NCU_CACHE": str(tmp_path / "cache")}
    drafted = runner.invoke(cli, ["init", str(kernel)], env=env)
    assert drafted.exit_code == 0, drafted.output
    assert "to fill (8)" in drafted.output
    spec = Path("masked_bias_scale.toml")
    unfilled = runner.invoke(cli, ["bench", "--kernel", str(kernel)], env=env)
    assert unfilled.exit_code == 2 and "8 left" in unfilled.output  # bad input
    spec.write_text(fill(spec.read_text(), MASKED_BIAS_SCALE))
    # The committed example is exactly this: the draft with its placeholders filled.
    assert spec.read_text() == (EXAMPLE / "masked_bias_scale.toml").read_text()
    stub = runner.invoke(cli, ["bench", "--kernel", str(kernel)], env=env)
    assert stub.exit_code == 2 and "the reference raised NotImplementedError" in stub.output
    shutil.copy(EXAMPLE / "masked_bias_scale_reference.py", tmp_path)  # its body written
    bench = runner.invoke(cli, ["bench", "--kernel", str(kernel)], env=env)
    assert bench.exit_code == 0, bench.output
    assert "registers" in bench.output and "no GPU" in bench.output


def test_the_committed_example_benches_without_a_gpu(tmp_path: Path) -> None:
    env = {**NO_GPU, "PRAGMA_NCU_CACHE": str(tmp_path / "cache")}
    result = CliRunner().invoke(cli, ["bench", "--kernel",
                                      str(EXAMPLE / "masked_bias_scale.cu")], env=env)
    assert result.exit_code == 0, result.output
    assert "masked_bias_scale" in result.output and "registers" in result.output
