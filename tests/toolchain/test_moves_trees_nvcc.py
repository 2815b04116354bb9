"""block_reduce and block_columns through nvcc (present in CI): every rewrite of the unit tests'
snippets and of the calibration kernels they read compiles for sm_90 at every knob value, and
shuffles where the tree was (block_columns across a warp's row groups, none at 32 columns)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pragma_ncu.coder.moves import Applied, by_name
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant
from pragma_ncu.spec.file import load_spec
from tests.fakes.tuner import H200_LIMITS
from tests.move_kernels import block_columns as columns
from tests.move_kernels import block_reduce as reduce

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]
STRUCTURAL = ROOT / "examples" / "moves" / "structural"
KERNELS = {"block_reduce": ["rmsnorm_rows", "lse_vocab", "extra/row_absmax_scale",
                            "extra/row_center_var"],
           "block_columns": ["bias_grad", "extra/col_l2_blocks", "extra/col_min_blocks"]}
SNIPPETS: dict[str, list[tuple[str, Any, str, str]]] = {
    "block_reduce": [(name, reduce.rows, source, block) for name, source, args, block in (
        ("rowsum", reduce.ROWSUM, reduce.ROW_ARGS, "256"),
        ("sumsq", reduce.SUMSQ, reduce.SUMSQ_ARGS, "128"),
        ("lse", reduce.LSE, reduce.ROW_ARGS, "64"),
        ("count", reduce.COUNT, reduce.COUNT_ARGS, "512"))],
    "block_columns": [(name, columns.columns, source, block)
                      for name, (source, _, block) in columns.SOURCES.items()]}
ARGS = {"rowsum": reduce.ROW_ARGS, "sumsq": reduce.SUMSQ_ARGS, "lse": reduce.ROW_ARGS,
        "count": reduce.COUNT_ARGS, **{n: a for n, (_, a, _) in columns.SOURCES.items()}}


def _compiles(nvcc: Any, text: str, out: Path) -> str:
    """The PTX of `text`, which must compile for sm_90 and then to a cubin."""
    source = out / "k.cu"
    source.write_text(text)
    for kind in ("-ptx", "-cubin"):
        run = subprocess.run([nvcc.path, "-arch=sm_90", "-O3", kind, "-o",
                              str(out / f"k{kind}"), str(source)], capture_output=True,
                             text=True)
        assert run.returncode == 0, f"{run.stderr}\n{text}"
    return (out / "k-ptx").read_text()


def _every_value(nvcc: Any, spec: Any, move: str, out: Path) -> None:
    base = asm.base_of(original_variant(spec), spec, spec.default_params())
    subject = asm.subject_of(base, spec, spec.default_params(), (), 32, H200_LIMITS)
    assert not isinstance(subject, str), subject
    a = by_name(move).apply(subject)
    assert isinstance(a, Applied), a
    built, kept, _ = asm.assemble(base, [a], "m", "", spec.source_path.parent)
    assert kept == [a]
    (knob,) = a.knobs
    for value in knob.values:
        if value == knob.default:
            continue
        ptx = _compiles(nvcc, asm.instance(built, {knob.name: value}), out)
        lanes = move == "block_reduce" or int(value) < 32  # 32 columns: a warp's lanes are
        assert ("shfl.sync.down" in ptx) == lanes, f"{move} at {knob.name}={value}"  # all apart


@pytest.mark.parametrize(("move", "kernel"), [(m, k) for m, ks in KERNELS.items() for k in ks],
                         ids=lambda x: str(x))
def test_every_rewrite_of_a_calibration_kernel_compiles(move: str, kernel: str, tmp_path: Path,
                                                        nvcc) -> None:  # type: ignore[no-untyped-def]
    _every_value(nvcc, load_spec(STRUCTURAL / f"{kernel}.toml"), move, tmp_path)


@pytest.mark.parametrize(("move", "name"), [(m, s[0]) for m, ss in SNIPPETS.items() for s in ss])
def test_every_rewrite_of_the_snippets_compiles(move: str, name: str, tmp_path: Path,
                                                nvcc) -> None:  # type: ignore[no-untyped-def]
    _, make, source, block = next(s for s in SNIPPETS[move] if s[0] == name)
    _every_value(nvcc, make(tmp_path, source, ARGS[name], block), move, tmp_path)
