"""`pragma-ncu moves` (`api.moves`) without a GPU: every move read against a kernel as tune's
rounds read it (one function, `loop.moves.read`), with its knobs and launch or why it does not
fit; the JSON it prints; a rewrite that does not compile named with the compiler's first error
(the compile itself is tests/toolchain/test_moves_cli.py's); bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pragma_ncu import api
from pragma_ncu.backends.cuda.target import CudaTarget
from pragma_ncu.cli.main import cli
from pragma_ncu.coder.moves import MOVES
from pragma_ncu.coder.variant import original_variant
from pragma_ncu.infra.errors import KernelFailure
from pragma_ncu.loop import moves as loop_moves
from pragma_ncu.report.moves import review_lines
from pragma_ncu.spec.file import load_spec
from pragma_ncu.spec.model import TaskSpec
from tests.fakes.tuner import H200_LIMITS

ROOT = Path(__file__).resolve().parents[2]
MOVES_DIR = ROOT / "examples" / "moves"


def statuses(report: api.MovesReport) -> dict[str, str]:
    return {m.move: m.status for m in report.moves}


def test_a_kernel_a_move_fits_and_one_it_must_refuse() -> None:
    """frames_wsum accumulates into out[c] in a loop: readonly and unroll fit it; it has no
    shared tile, so smem_pad refuses it and says why. tile_transpose is the other way round."""
    report = api.moves(MOVES_DIR / "frames_wsum.cu")
    assert [m.move for m in report.moves] == [m.name for m in MOVES]
    got = {m.move: m for m in report.moves}
    assert got["readonly"].applies and got["unroll"].applies
    assert [(k.name, k.values, k.default) for k in got["unroll"].knobs] == [
        ("PNCU_UNROLL", (0, 1, 2, 4, 8), 0)]
    assert got["unroll"].sites and "line 9" in got["unroll"].sites[0]
    assert got["unroll"].boldest == {"PNCU_UNROLL": 8} and got["unroll"].grid is None
    assert got["smem_pad"].status == "refused"
    assert got["smem_pad"].reason == "no __shared__ array of two or more dimensions"
    # block_size searches the launch: the grid it recomputes and the block as a knob
    assert got["block_size"].grid == ("ceil_div(C, PNCU_BLOCK)",)
    assert got["block_size"].block == ("PNCU_BLOCK",)
    # nothing was compiled without --diff; offline, what is not known is said
    assert all(m.compiled is None and not m.diff for m in report.moves)
    assert report.notes and "no hot lines" in report.notes[0] and "registers" in report.notes[0]
    assert got["launch_bounds"].reason == "the registers per thread of the best build are unknown"

    transpose = statuses(api.moves(MOVES_DIR / "tile_transpose.cu"))
    assert transpose["smem_pad"] == "fits" and transpose["readonly"] == "refused"


@pytest.mark.parametrize("spec_path", sorted(MOVES_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_the_command_reads_the_kernel_as_tunes_rounds_do(spec_path: Path) -> None:
    """The same function reads the subject for both: tune's options at the original (with no
    profile, as offline) say what the command says."""
    spec = load_spec(spec_path)
    read = loop_moves.read(lambda v: spec, original_variant(spec), spec.default_params(),
                           limits=H200_LIMITS)
    options = loop_moves.options_of(read if isinstance(read, str) else read[1])
    assert {o.name: o.applies for o in options} == {
        m.move: m.applies for m in api.moves(spec_path).moves}


def test_a_source_no_move_reads_says_why_once(tmp_path: Path) -> None:
    report = api.moves(ROOT / "examples" / "cpu" / "conv1d.cpp")
    assert report.unread.startswith("the source moves rewrite CUDA sources (.cu)")
    assert {m.status for m in report.moves} == {"refused"}
    assert {m.reason for m in report.moves} == {report.unread}


def test_the_json_shape() -> None:
    res = CliRunner().invoke(cli, ["moves", "--kernel", str(MOVES_DIR / "gamma_lut.cu"),
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) == {"kernel", "source", "launch", "unread", "notes", "arch", "moves"}
    assert data["kernel"] == "gamma_lut" and data["unread"] is None
    assert data["launch"] == {"grid": ["ceil_div(n, 256)"], "block": ["256"]}
    moves = {m["move"]: m for m in data["moves"]}
    assert set(moves) == {m.name for m in MOVES}
    assert set(moves["coarsen"]) == {"move", "status", "applies", "reason", "answers", "why",
                                     "knobs", "sites", "launch", "boldest", "flags", "diff",
                                     "compiled", "compile_error"}
    coarsen = moves["coarsen"]
    assert coarsen["status"] == "fits" and coarsen["applies"] is True
    assert coarsen["knobs"] == [{"name": "PNCU_COARSEN", "values": [1, 2, 4, 8, 16],
                                 "default": 1, "flag": None}]
    assert coarsen["launch"] == {"grid": ["ceil_div(ceil_div(n, 256), PNCU_COARSEN)"],
                                 "block": ["256"]}
    assert moves["fast_math"]["flags"] == ["-use_fast_math"]
    assert moves["smem_pad"]["status"] == "refused" and moves["smem_pad"]["reason"]
    assert coarsen["diff"] is None and coarsen["compiled"] is None  # no --diff


def test_the_table_lists_every_move() -> None:
    res = CliRunner().invoke(cli, ["moves", "--kernel", str(MOVES_DIR / "gamma_lut.cu")])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("gamma_lut (")
    assert all(m.name in res.output for m in MOVES) and "note: no profile offline" in res.output


@pytest.mark.parametrize("args", [["--kernel", "nope.cu"],
                                  ["--kernel", str(MOVES_DIR / "gamma_lut.cu"), "--spec",
                                   "nope.toml"]])
def test_bad_input_exits_2(args: list[str]) -> None:
    res = CliRunner().invoke(cli, ["moves", *args])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "Error:" in res.output


def test_a_rewrite_that_does_not_compile_names_the_first_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What nvcc says is planted here (the real compile is a toolchain test): unroll's
    boldest point fails with its first error line, the other moves compile."""
    def compile_(self: CudaTarget, spec: TaskSpec, settings: Any, arch: str | None) -> str:
        if spec.default_params().get("PNCU_UNROLL") == 8:
            raise KernelFailure("frames_wsum.cu(9): warning: planted\n"
                                "frames_wsum.cu(10): error: planted error\nmore")
        return "compiles"
    monkeypatch.setattr(CudaTarget, "without_device", compile_)
    report = api.moves(MOVES_DIR / "frames_wsum.cu", diff=True)
    got = {m.move: m for m in report.applicable}
    assert got["unroll"].compiled is False
    assert got["unroll"].compile_error == ("it does not compile at {'PNCU_UNROLL': 8}: "
                                           "frames_wsum.cu(10): error: planted error")
    assert "+    #pragma unroll 8" in got["unroll"].diff
    assert got["readonly"].compiled is True and got["readonly"].compile_error == ""
    assert got["cache_policy"].diff == "" and got["cache_policy"].flags == (
        "-Xptxas", "-dlcm=cg")
    text = "\n".join(review_lines(report, diff=True))
    assert "== unroll at its boldest (PNCU_UNROLL=8): it does not compile" in text
    assert "== readonly at its boldest (PNCU_READONLY=1): compiles" in text
    assert "launch there: grid ['ceil_div(C, 1024)'], block ['1024']" in text
