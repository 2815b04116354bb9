"""The lower-precision ceiling (issue 38): for an FP32 GEMM-like kernel on the SIMT pipes,
`explain` and `triage` say what the same math would take on TF32 and BF16 tensor cores, as a
separate, labelled figure beside the FP32 roofline (never replacing it), and say nothing of the
kind for any other kernel. Recorded on an H200: cuBLAS's xmma FP32 GEMM and CUTLASS's SIMT
SGEMM (tests/fixtures/apps/library, torch_block), our corpus's kernels (tests/fixtures/corpus)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pragma_ncu.backends import diagnose_in
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.triage.load import read_side

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
PRECISION = FIXTURES / "apps" / "library" / "precision"
TORCH = FIXTURES / "apps" / "torch_block"


def run(command: str, *args: str | Path) -> Result:
    return CliRunner().invoke(cli, [command, *map(str, args)])


@pytest.fixture(scope="module")
def knowledge() -> Compendium:
    return Compendium.load()


def lower_by_kernel(folder: Path, knowledge: Compendium) -> dict[str, tuple]:
    """Each kernel name of a recorded report -> its lower-precision figures (one launch)."""
    side = read_side(str(folder), "X", load_settings())
    first = {}
    for k in side.profile.kernels:
        first.setdefault(k.name, k)
    full = side.full(list(first.values()))
    return {k.name: diagnose_in(side.profile, k, knowledge).roofline.lower_precision
            for k in full.values()}


def test_an_fp32_simt_gemm_gets_tf32_and_bf16_figures_and_nothing_else_does(knowledge):
    found = lower_by_kernel(PRECISION / "base", knowledge)
    gemm = next(v for name, v in found.items() if "xmma_gemm" in name)
    assert [p.unit for p in gemm] == ["TF32 tensor cores", "BF16 tensor cores"]
    tf32, bf16 = gemm
    assert tf32.rate_ratio == pytest.approx(494.5 / 67, rel=1e-3) and tf32.gpu == "H200"
    assert bf16.time_ns == pytest.approx(tf32.time_ns / 2, rel=0.01)  # both compute-bound
    # 2.68 ms a launch at 79% of the FMA pipe: about 0.28 ms on TF32 tensor cores
    assert tf32.time_ns == pytest.approx(279_000, rel=0.05) and 9 < tf32.speedup < 10
    assert not [name for name, v in found.items() if v and "xmma_gemm" not in name]
    # the tensor-core GEMM NEW runs instead is already there: no figure
    assert not any(lower_by_kernel(PRECISION / "new", knowledge).values())


@pytest.mark.parametrize("report", ["full/first", "default/first", "full/holdout2"])
def test_fma_bound_kernels_that_are_no_gemm_get_no_figure(knowledge, report):
    """The corpus's FMA chains, polynomials and divergent loops run many FLOPs per byte on the
    FMA pipe; no tensor core runs their math. Only sgemm_tiled, a GEMM, gets the figure."""
    found = lower_by_kernel(FIXTURES / "corpus" / report, knowledge)
    assert {name for name, v in found.items() if v} <= {"sgemm_tiled"}
    assert "fma_bound" in found or "tail_regs" in found  # FMA-heavy kernels were looked at


def test_explain_labels_the_figure_beside_the_fp32_roofline():
    result = run("explain", PRECISION / "base", "--kernel", "sm80_xmma")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Roofline: " in text and "of the attainable roofline (set by the FMA pipe" in text
    assert "Lower precision: at a lower precision, if the results allow it (beside, not " \
        "instead of, the FP32 roofline): TF32 tensor cores >= 279" in text
    assert "7.4x FP32's rate on the H200 datasheet" in text
    overview = run("explain", PRECISION / "base").output
    lines = [line for line in overview.splitlines() if "lower precision" in line]
    assert len(lines) == 1 and "TF32 >= 279 µs, BF16 >= 140 µs a launch" in lines[0]
    data = json.loads(run("explain", PRECISION / "base", "--format", "json").output)
    groups = data["application"]["groups"] if "application" in data else data["groups"]
    with_figure = [g["name"] for g in groups if g["lower_precision"]]
    assert len(with_figure) == 1 and "xmma_gemm" in with_figure[0]


def test_triage_shows_it_for_the_simt_gemm_a_swap_brought():
    result = run("triage", TORCH / "base", TORCH / "new")
    text = " ".join(result.output.split())
    assert "NEW at lower precision, if allowed: TF32 >= 185 µs, BF16 >= 92.6 µs a launch" in text
    assert text.count("lower precision") == 1  # the tensor-core GEMM BASE ran has none
    data = json.loads(run("triage", TORCH / "base", TORCH / "new", "--format", "json").output)
    gemm = next(k for k in data["kernels"] if k["name"].startswith("cutlass::Kernel2"))
    assert [p["unit"] for p in gemm["lower_precision"]["new"]] == ["TF32 tensor cores",
                                                                  "BF16 tensor cores"]
    assert gemm["lower_precision"]["base"] == []
