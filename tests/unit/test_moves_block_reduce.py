"""block_reduce: a block's shared-memory tree reduction replaced by warp shuffles and one
barrier between the warps. The rewrite on snippets in several styles (it applies, keeps the
slot store and what reads slot 0, refuses what it cannot replace), its default giving back the
source, its composition with the other moves, and the rewritten kernels run thread by thread on
the CPU against their sources at odd shapes and several block sizes; last, the structural
calibration kernels block_reduce and block_columns read, rewritten and run the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.spec.file import load_spec
from tests.fakes import cuda_on_cpu
from tests.fakes.moves import applied, base_of, refused, rendered, spec_of, variant
from tests.move_kernels.block_reduce import (
    COUNT,
    COUNT_ARGS,
    LSE,
    ROW_ARGS,
    ROW_SHAPES,
    ROWSUM,
    SUMSQ,
    SUMSQ_ARGS,
    rows,
)


def test_the_tree_becomes_warp_shuffles_and_one_barrier_between_the_warps(
        tmp_path: Path) -> None:
    spec = rows(tmp_path)
    a = applied("block_reduce", spec)
    assert [(k.name, k.values, k.default) for k in a.knobs] == [("PNCU_BLOCK_REDUCE", (0, 1), 0)]
    assert a.grid is None and a.block is None and not a.writes_block  # the launch as written
    assert a.sites == ("the halving tree over buf at line 9 (+, 256 threads): warp shuffles "
                       "and two barriers in place of 8",)
    assert rendered(spec, [a]) == ROWSUM
    assert rendered(spec, [a], PNCU_BLOCK_REDUCE=1) == ROWSUM.replace("""\
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
""", """\
    {  // the tree over buf as warp shuffles: each warp's slots, then the warps' values
        float pncu_v = buf[threadIdx.x];
        for (int pncu_o = 16; pncu_o > 0; pncu_o /= 2) {
            const float pncu_u = __shfl_down_sync(0xffffffffu, pncu_v, pncu_o);
            pncu_v += pncu_u;
        }
        __shared__ float pncu_warps0[32];
        if (threadIdx.x % 32 == 0) pncu_warps0[threadIdx.x / 32] = pncu_v;
        __syncthreads();
        if (threadIdx.x < 32) {
            pncu_v = pncu_warps0[threadIdx.x < blockDim.x / 32 ? threadIdx.x : 0];
            for (int pncu_o = 16; pncu_o > 0; pncu_o /= 2) {
                const float pncu_u = __shfl_down_sync(0xffffffffu, pncu_v, pncu_o);
                if (threadIdx.x + pncu_o < blockDim.x / 32) pncu_v += pncu_u;
            }
            if (threadIdx.x == 0) buf[0] = pncu_v;
        }
        __syncthreads();
    }
""")


def test_the_interleaved_form_over_double_slots(tmp_path: Path) -> None:
    spec = rows(tmp_path, SUMSQ, SUMSQ_ARGS, "128")
    a = applied("block_reduce", spec)
    assert a.sites[0].startswith("the interleaved tree over part at line 12 (+, 128 threads)")
    on = rendered(spec, [a], PNCU_BLOCK_REDUCE=1)
    assert "        double pncu_v = part[threadIdx.x];\n" in on
    assert "const double pncu_u = __shfl_down_sync(0xffffffffu, pncu_v, pncu_o);\n" \
           "            pncu_v = pncu_v + pncu_u;\n" in on  # the tree's own combine
    assert "threadIdx.x % (2 * s)" not in on and on.count("__syncthreads();") == 3
    assert "    const float inv = (float)(1.0 / sqrt(part[0] / C + 1e-6));\n" in on
    assert rendered(spec, [a]) == SUMSQ


def test_every_tree_of_the_kernel_is_replaced_with_its_own_combine(tmp_path: Path) -> None:
    spec = rows(tmp_path, LSE, block="64")
    a = applied("block_reduce", spec)
    assert [s.split(" at line")[0] for s in a.sites] == ["the halving tree over top",
                                                         "the halving tree over total"]
    on = rendered(spec, [a], PNCU_BLOCK_REDUCE=1)
    assert on.count("__shared__ float pncu_warps0[32];") == 1
    assert on.count("__shared__ float pncu_warps1[32];") == 1
    assert "pncu_v = pncu_u > pncu_v ? pncu_u : pncu_v;" in on
    assert "if (threadIdx.x + pncu_o < blockDim.x / 32) pncu_v += pncu_u;" in on
    assert "    const float mx = top[0];\n" in on and "logf(total[0])" in on


@pytest.mark.parametrize(("source", "args", "block", "old", "new", "why"), [
    (ROWSUM, None, "B", "", "", "the block size is an expression (B)"),
    (ROWSUM, None, "48", "", "", "not a whole number of warps"),
    (ROWSUM, None, "96", "", "", "(48, 24, 12, 6, 3, 1) do not halve"),
    (ROWSUM, None, "256", "int s = blockDim.x / 2", "int s = 64",
     "reduces 128 slots and the block has 256 threads"),
    (ROWSUM, None, "256", "    buf[tid] = acc;\n",
     "    if (acc != acc) return;\n    buf[tid] = acc;\n",
     "a thread may leave before the tree at line 10 (return;, line 7)"),
    (ROWSUM, None, "256", "    for (int s", "    if (tid < 128)\n    for (int s",
     "stands under a condition on the thread (line 9)"),
    (ROWSUM, None, "256", "out[blockIdx.x] = buf[0];", "out[blockIdx.x] = buf[0] + buf[1];",
     "buf[1] is read at line 13, outside the tree"),
    (ROWSUM, None, "256", "out[blockIdx.x] = buf[0];", "out[blockIdx.x] = *(&buf[0]);",
     "the address of buf[0] is taken"),
    (ROWSUM, None, "256", "__shared__ float buf[256];", "__shared__ __half buf[256];",
     "no one-dimensional array of a plain arithmetic type (__half)"),
    (ROWSUM, None, "256", "    for (int s", "    #pragma unroll\n    for (int s",
     "does not start its own line below no pragma"),
    (ROWSUM, None, "256", "float acc = 0.0f;", "float acc = 0.0f, pncu_v = 0.0f;",
     "names of its own that begin with pncu_"),
    (ROWSUM, None, "256", "buf[tid] += buf[tid + s];", "buf[tid] -= buf[tid + s];",
     "does not combine buf[tid] with its partner by a sum, min or max"),
    (ROWSUM, None, "256", "for (int s = blockDim.x / 2; s > 0; s >>= 1)",
     "for (int s = blockDim.x / 2; s > 32; s >>= 1)", "do not halve from a power of two to 1"),
    (ROWSUM, None, "256", "        __syncthreads();\n    }", "    }\n    __syncthreads();",
     "no shared-memory tree reduction over threadIdx.x"),
])
def test_block_reduce_refuses_what_it_cannot_replace(tmp_path: Path, source: str,
                                                     args: Any, block: str, old: str, new: str,
                                                     why: str) -> None:
    text = source.replace(old, new) if old else source
    assert text != source or not old
    params = {"B": {"default": 256, "values": [128, 256]}} if block == "B" else None
    assert why in refused("block_reduce", rows(tmp_path, text, args, block, params=params))


def test_a_kernel_without_a_tree_is_told_so_whatever_its_launch(tmp_path: Path) -> None:
    flat = ROWSUM.replace("""    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
""", "")
    params = {"B": {"default": 256, "values": [128, 256]}}
    assert "no shared-memory tree reduction over threadIdx.x" in refused(
        "block_reduce", rows(tmp_path, flat, block="B", params=params))


def test_block_reduce_refuses_a_two_dimensional_block_and_slots_of_a_warp_row(
        tmp_path: Path) -> None:
    spec = spec_of(tmp_path, ROWSUM, args=ROW_ARGS, grid=("R",), block=("256", "2"),
                   shapes=ROW_SHAPES)
    assert "the block is not one-dimensional" in refused("block_reduce", spec)
    rowed = ROWSUM.replace("buf[256]", "buf[8][32]").replace("buf[tid] = acc", "buf[0][tid] = acc")\
        .replace("buf[tid] += buf[tid + s]", "buf[0][tid] += buf[0][tid + s]")
    assert "at the thread's slot" in refused("block_reduce", rows(tmp_path, rowed))


def test_block_reduce_leaves_a_column_reduction_to_block_columns(tmp_path: Path) -> None:
    source = ROWSUM.replace("const int tid = threadIdx.x;", "const int tid = threadIdx.x;\n"
                            "    const int c = blockIdx.x;").replace(
        "x[(long long)blockIdx.x * C + j]", "x[(long long)j * C + c]").replace(
        "out[blockIdx.x]", "out[c]")
    args = [{**a, "shape": ["C"]} if a["name"] == "out" else a for a in ROW_ARGS]
    spec = spec_of(tmp_path, source, args=args, grid=("C",), shapes=ROW_SHAPES)
    assert "block_columns re-lays this column reduction" in refused("block_reduce", spec)
    assert applied("block_columns", spec)


def test_block_reduce_composes_with_unroll_readonly_and_fast_math(tmp_path: Path) -> None:
    spec = rows(tmp_path, SUMSQ, SUMSQ_ARGS, "128")
    moves = [applied(m, spec) for m in ("block_reduce", "unroll", "readonly")]
    built = variant(spec, moves)
    text = asm.instance(built, {"PNCU_BLOCK_REDUCE": 1, "PNCU_UNROLL": 4, "PNCU_READONLY": 1})
    assert "const float* __restrict__ x" in text and text.count("#pragma unroll 4") == 2
    assert "pncu_warps0" in text
    assert asm.instance(built, {"PNCU_BLOCK_REDUCE": 0, "PNCU_UNROLL": 0,
                                "PNCU_READONLY": 0}) == SUMSQ
    assert built.overlay["launch"] == base_of(spec).launch  # no move here changes it
    lse = rows(tmp_path, LSE, block="64")
    both = variant(lse, [applied("block_reduce", lse), applied("fast_math", lse)])
    assert asm.instance(both, {"PNCU_BLOCK_REDUCE": 1, "PNCU_FAST_MATH": ""}).count(
        "pncu_warps") == 6


# --- the rewrite run on the CPU, thread by thread --------------------------------------------

needs_cxx = pytest.mark.skipif(cuda_on_cpu.compiler() is None, reason="no C++ compiler")


def agrees(spec: Any, dims: dict[str, int], tmp: Path) -> dict[str, float]:
    a = applied("block_reduce", spec)
    built = variant(spec, [a])
    point = {"PNCU_BLOCK_REDUCE": 1}
    return cuda_on_cpu.equivalent(spec, asm.instance(built, point), built.overlay["launch"],
                                  point, dims, tmp)


@needs_cxx
@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")  # int outputs' poison
@pytest.mark.parametrize(("name", "block", "dims"), [
    ("rowsum", "256", {"R": 3, "C": 1001}),
    ("rowsum", "32", {"R": 4, "C": 77}),
    ("rowsum", "1024", {"R": 2, "C": 3001}),
    ("sumsq", "128", {"R": 3, "C": 333}),
    ("lse", "64", {"R": 5, "C": 999}),
    ("count", "512", {"R": 3, "C": 2049}),
])
def test_the_rewrite_computes_what_the_tree_does(tmp_path: Path, name: str, block: str,
                                                 dims: dict[str, int]) -> None:
    source, args = {"rowsum": (ROWSUM, ROW_ARGS), "sumsq": (SUMSQ, SUMSQ_ARGS),
                    "lse": (LSE, ROW_ARGS), "count": (COUNT, COUNT_ARGS)}[name]
    if block != "256":
        source = source.replace("buf[256]", f"buf[{block}]")
    errors = agrees(rows(tmp_path, source, args, block), dims, tmp_path)
    if name == "count":
        assert errors == {"out": 0.0}  # integers: exact in any order


STRUCTURAL = Path(__file__).resolve().parents[2] / "examples" / "moves" / "structural"


@needs_cxx
@pytest.mark.parametrize(("kernel", "move", "point", "dims"), [
    ("rmsnorm_rows", "block_reduce", {"PNCU_BLOCK_REDUCE": 1}, {"N": 5, "C": 1001}),
    ("lse_vocab", "block_reduce", {"PNCU_BLOCK_REDUCE": 1}, {"N": 3, "V": 5003}),
    ("extra/row_absmax_scale", "block_reduce", {"PNCU_BLOCK_REDUCE": 1}, {"R": 7, "C": 1001}),
    ("extra/row_center_var", "block_reduce", {"PNCU_BLOCK_REDUCE": 1}, {"R": 9, "C": 777}),
    ("bias_grad", "block_columns", {"PNCU_COLS": 8}, {"N": 1001, "C": 99}),
    ("extra/col_l2_blocks", "block_columns", {"PNCU_COLS": 16}, {"R": 999, "C": 77}),
    ("extra/col_min_blocks", "block_columns", {"PNCU_COLS": 32}, {"R": 1001, "C": 61}),
])
def test_the_calibration_kernels_rewrites_compute_what_they_do(
        tmp_path: Path, kernel: str, move: str, point: dict[str, int],
        dims: dict[str, int]) -> None:
    """The structural kernels each move reads, rewritten, at odd shapes (their spec's odd shape
    or a smaller one of the same kind) on the CPU against the kernels as written."""
    spec = load_spec(STRUCTURAL / f"{kernel}.toml")
    built = variant(spec, [applied(move, spec)])
    cuda_on_cpu.equivalent(spec, asm.instance(built, point), built.overlay["launch"], point,
                           dims, tmp_path)
