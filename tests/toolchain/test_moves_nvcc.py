"""The source moves through nvcc (present in CI): on every calibration kernel (the extra
structural ones too) and bundled plain example, the moves template at its defaults compiles to
the same cubin as the source, and each move's boldest point compiles; the best kernel written
out as plain source compiles on its own with the flags its header names."""

from __future__ import annotations

import shlex
import subprocess
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.backends.cuda.build import build
from pragma_ncu.build import task as tasks
from pragma_ncu.build.compile import BuildCache
from pragma_ncu.coder.moves import MOVES, Applied
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant, variant_spec
from pragma_ncu.loop.moves import move_names
from pragma_ncu.spec.file import load_spec
from tests.fakes.tuner import H200_LIMITS

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]
TEMPLATED = ROOT / "tests" / "fixtures" / "moves" / "templated" / "softplus_rows.toml"
KERNELS = sorted([*(ROOT / "examples" / "moves").glob("*.toml"),
                  *(ROOT / "examples" / "moves" / "structural" / "extra").glob("*.toml"),
                  *(p for p in (ROOT / "examples").glob("*.toml")), TEMPLATED])


@pytest.mark.parametrize("spec_path", KERNELS, ids=lambda p: p.stem)
def test_the_defaults_compile_to_the_original_cubin_and_each_move_compiles(
        spec_path: Path, tmp_path: Path, nvcc) -> None:  # type: ignore[no-untyped-def]
    spec = load_spec(spec_path)
    point = spec.default_params()
    base = asm.base_of(original_variant(spec), spec, point)
    subject = asm.subject_of(base, spec, point, (), 128, H200_LIMITS)
    assert not isinstance(subject, str), subject
    moves = [r for r in asm.try_moves(subject, MOVES) if isinstance(r, Applied)]
    assert moves, "no move fits: the calibration kernels each have one, the examples several"
    variant, kept, refused = asm.assemble(base, moves, "moves 1", "", spec_path.parent)
    alone = [asm.assemble(base, [a], f"{a.move} alone", "", spec_path.parent)[0]
             for a in moves if a.move in {r.move for r in refused}]  # two that rewrite one place
    tables = tomllib.loads(spec_path.read_text())
    vspec = variant_spec(tables, variant, spec.spec_path, tmp_path / "variants")
    cache = BuildCache(tmp_path / "build")
    # without line tables, which name the file (a template renders to a file of its own)
    original = build(replace(tasks.build_request(spec, "sm_90", point), lineinfo=False), nvcc,
                     cache)
    defaults = build(replace(tasks.build_request(vspec, "sm_90", vspec.default_params()),
                             lineinfo=False), nvcc, cache)
    assert original.ok and defaults.ok, defaults.log
    assert Path(defaults.cubin_path).read_bytes() == Path(original.cubin_path).read_bytes()
    for a in kept:
        bold = {**vspec.default_params(), **{k.name: k.values[-1] for k in a.knobs}}
        built = build(replace(tasks.build_request(vspec, "sm_90", bold), lineinfo=False), nvcc,
                      cache)
        assert built.ok, f"{a.move} at {bold}:\n{built.log}"
        if a.edits or any(k.flag for k in a.knobs):  # (a launch-only move builds the same)
            assert built.key != defaults.key  # the move changed the source or the flags
    for other in alone:
        ospec = variant_spec(tables, other, spec.spec_path, tmp_path / "alone")
        bold = {**ospec.default_params(), **{k: v["values"][-1] for k, v in
                                             other.overlay["params"].items()
                                             if k.startswith("PNCU_")}}
        built = build(replace(tasks.build_request(ospec, "sm_90", bold), lineinfo=False), nvcc,
                      cache)
        assert built.ok, f"{other.name} at {bold}:\n{built.log}"


VECTOR_KERNELS = {
    "fp32": ("float", "y[i] = 0.5f * x[i] * (1.0f + tanhf(x[i]));", "ld.global.v4.f32"),
    "fp16": ("__half", "y[i] = __hmul(x[i], x[i]);", "ld.global.v4.u32"),
}


@pytest.mark.parametrize("dtype", sorted(VECTOR_KERNELS))
def test_vectorize_compiles_to_16_byte_accesses(dtype: str, tmp_path: Path,
                                                 nvcc) -> None:  # type: ignore[no-untyped-def]
    from tests.fakes.moves import applied, rendered, spec_of

    ctype, work, load = VECTOR_KERNELS[dtype]
    source = (f"#include <cuda_fp16.h>\nextern \"C\" __global__ void k({ctype}* y, "
              f"const {ctype}* x, int n)\n{{\n    int i = blockIdx.x * blockDim.x + "
              f"threadIdx.x;\n    if (i >= n) return;\n    {work}\n}}\n")
    args = [{"name": "y", "dtype": dtype, "shape": ["n"], "role": "output"},
            {"name": "x", "dtype": dtype, "shape": ["n"], "role": "input"},
            {"name": "n", "dtype": "int32", "role": "scalar", "value": "n"}]
    spec = spec_of(tmp_path, source, args=args)
    a = applied("vectorize", spec)
    (tmp_path / "v.cu").write_text(rendered(spec, [a], PNCU_VEC=a.knobs[0].values[-1]))
    run = subprocess.run([nvcc.path, "-arch=sm_90", "-ptx", "-o", str(tmp_path / "v.ptx"),
                          str(tmp_path / "v.cu")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    ptx = (tmp_path / "v.ptx").read_text()
    assert ptx.count(load) == 2 and ptx.count(load.replace("ld.", "st.")) == 2  # 32 bytes


def test_the_best_written_out_compiles_alone(tmp_path: Path, nvcc) -> None:  # type: ignore[no-untyped-def]
    spec_path = ROOT / "examples" / "moves" / "gamma_lut.toml"
    spec = load_spec(spec_path)
    base = asm.base_of(original_variant(spec), spec, {})
    subject = asm.subject_of(base, spec, {}, (), 32, H200_LIMITS)
    assert not isinstance(subject, str)
    moves = [r for r in asm.try_moves(subject, MOVES) if isinstance(r, Applied)
             and r.move in ("coarsen", "fast_math")]
    variant, _, _ = asm.assemble(base, moves, "moves 1", "", spec_path.parent)
    vspec = variant_spec(tomllib.loads(spec_path.read_text()), variant, spec.spec_path,
                         tmp_path / "variants")
    values = {**vspec.default_params(), "PNCU_COARSEN": 8, "PNCU_FAST_MATH": "use_fast_math"}
    text = asm.plain_source(variant, vspec, values, move_names())
    assert "PNCU_" not in text and "{%" not in text and "{{" not in text
    flags = text.splitlines()[2].removeprefix("// nvcc flags: ")
    assert "-use_fast_math" in flags
    (tmp_path / "best.cu").write_text(text)
    run = subprocess.run([nvcc.path, "-arch=sm_90", "-cubin", "-o", str(tmp_path / "b.cubin"),
                          *shlex.split(flags), str(tmp_path / "best.cu")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_a_template_kernels_best_written_out_is_still_its_template(tmp_path: Path,
                                                                   nvcc) -> None:  # type: ignore[no-untyped-def]
    """A C++ function template keeps its template parameters through the moves: the best
    written out is the template, its instance taken at the best's values, and compiles alone
    into a cubin that holds that instance."""
    spec = load_spec(TEMPLATED)
    point = spec.default_params()
    base = asm.base_of(original_variant(spec), spec, point)
    subject = asm.subject_of(base, spec, point, (), 32, H200_LIMITS)
    assert not isinstance(subject, str)
    moves = [r for r in asm.try_moves(subject, MOVES) if isinstance(r, Applied)]
    variant, _, _ = asm.assemble(base, moves, "moves 1", "", TEMPLATED.parent)
    vspec = variant_spec(tomllib.loads(TEMPLATED.read_text()), variant, spec.spec_path,
                         tmp_path / "variants")
    values = {**vspec.default_params(), "BLOCK": 256, "PNCU_READONLY": 1, "PNCU_UNROLL": 4}
    text = asm.plain_source(variant, vspec, values, move_names())
    assert "template <int BLOCK, typename T>" in text and "PNCU_" not in text
    assert text.rstrip().endswith("&softplus_rows<256, float>);")
    (tmp_path / "best.cu").write_text(text)
    run = subprocess.run([nvcc.path, "-arch=sm_90", "-cubin", "-o", str(tmp_path / "b.cubin"),
                          str(tmp_path / "best.cu")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert b"softplus_rows" in (tmp_path / "b.cubin").read_bytes()


@pytest.mark.parametrize("tile", [16, 32])
def test_smem_tile_compiles_to_a_staged_tile_and_smem_pad_pads_it(
        tile: int, tmp_path: Path, nvcc) -> None:  # type: ignore[no-untyped-def]
    """The transpose snippets of the unit tests at each tile: one barrier, the staged loads
    through shared memory; and the tile padded by smem_pad in the next round compiles too."""
    from tests.fakes.moves import applied, rendered
    from tests.move_kernels import tile as snippets

    for make in (snippets.transpose, snippets.affine, snippets.permute, snippets.reverse,
                 snippets.two, snippets.half, snippets.deref):
        spec = make(tmp_path)
        text = rendered(spec, [applied("smem_tile", spec)], PNCU_TILE=tile)
        padded = text.replace(f"[{tile}][{tile}];", f"[{tile}][{tile} + 1];")
        for name, source in (("tiled", text), ("padded", padded)):
            (tmp_path / f"{name}.cu").write_text(source)
            run = subprocess.run([nvcc.path, "-arch=sm_90", "-ptx", "-o",
                                  str(tmp_path / f"{name}.ptx"), str(tmp_path / f"{name}.cu")],
                                 capture_output=True, text=True)
            assert run.returncode == 0, (make.__name__, name, run.stderr)
            ptx = (tmp_path / f"{name}.ptx").read_text()
            assert ptx.count("bar.sync") == 1 and "st.shared" in ptx and "ld.shared" in ptx
