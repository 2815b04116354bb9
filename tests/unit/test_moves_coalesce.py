"""coalesce: the thread-to-index mapping swapped where adjacent threads touch addresses far
apart. The rewrites on snippets (a naive SGEMM, a matrix times a few vectors, flat indices split
column-major), the defaults giving back the source and the launch, every refusal, the
composition with the other moves, the launch at every shape, and the rewritten kernels run
thread by thread on the CPU against their sources at odd shapes, at both knob values."""

from __future__ import annotations

import ctypes
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pragma_ncu.coder.moves import Applied, by_name
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant
from pragma_ncu.knowledge.schema import BOTTLENECKS
from pragma_ncu.spec import expr
from pragma_ncu.spec.file import load_spec
from pragma_ncu.spec.model import TaskSpec
from tests.fakes import cuda_on_cpu
from tests.fakes.moves import applied, refused, rendered, spec_of, subject, variant


def args(arrays: str, scalars: str) -> list[dict[str, Any]]:
    """A spec's arguments: fp32 arrays written `name:DIM,DIM[:role]` (inputs unless a role is
    given), then int32 scalars named as the dimensions they pass."""
    out: list[dict[str, Any]] = []
    for array in arrays.split():
        name, shape, *role = array.split(":")
        out.append({"name": name, "dtype": "fp32", "shape": shape.split(","),
                    "role": role[0] if role else "input"})
    return out + [{"name": n, "dtype": "int32", "role": "scalar", "value": n}
                  for n in scalars.split()]


SGEMM = """extern "C" __global__ void k(float* C, const float* A, const float* B, int M, int N,
                                   int K)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int e = 0; e < K; ++e)
            sum += A[row * K + e] * B[e * N + col];
        C[row * N + col] = sum;
    }
}
"""
MATMUL_ARGS = args("C:M,N:output A:M,K B:K,N", "M N K")
MATMUL_SHAPES = [{"name": "main", "M": 1024, "N": 1536, "K": 1024},
                 {"name": "odd", "M": 37, "N": 45, "K": 29}]
GRID16 = ("ceil_div(M, 16)", "ceil_div(N, 16)")
# Y [M, B] = A [M, K] X [K, B]: a matrix times a few vectors (the vectors X's columns), thread
# indices named first, an early return, a row pointer, a while loop, 64-bit offsets.
FEW = """extern "C" __global__ void k(float* Y, const float* A, const float* X, int M, int B, int K)
{
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i = blockDim.x * blockIdx.x + tx;
    const int b = blockDim.y * blockIdx.y + ty;
    if (i >= M || b >= B) return;
    const float* a = A + (size_t)i * K;
    float acc = 0.0f;
    int e = 0;
    while (e < K) {
        acc += a[e] * X[(size_t)e * B + b];
        ++e;
    }
    Y[(size_t)i * B + b] = acc;
}
"""
FEW_ARGS = args("Y:M,B:output A:M,K X:K,B", "M B K")
FEW_SHAPES = [{"name": "main", "M": 8192, "B": 64, "K": 4096},
              {"name": "odd", "M": 45, "B": 7, "K": 33}]
# C [M, N] = A [M, K] B [N, K]^T: swapped, B's lanes would lie apart as A's do as written (a
# trade, not a fix).
TRADE = SGEMM.replace("B[e * N + col]", "B[col * K + e]")
COALESCED = """extern "C" __global__ void k(float* y, const float* x, int H, int W)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < H && col < W)
        y[row * W + col] = 2.0f * x[row * W + col];
}
"""
IMAGE_ARGS = args("y:H,W:output x:H,W", "H W")
IMAGE_SHAPES = [{"name": "main", "H": 4096, "W": 4096}, {"name": "odd", "H": 37, "W": 45}]
# Flat indices split column-major over a row-major [R, C]: a guard on both coordinates, and a
# 64-bit index bounded by the product with an early return and casts.
FLAT = """extern "C" __global__ void k(float* y, const float* x, const float* bias, int R, int C)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int r = t % R;
    int c = t / R;
    if (r < R && c < C)
        y[r * C + c] = x[r * C + c] + bias[c];
}
"""
PRODUCT = """extern "C" __global__ void k(float* y, const float* x, const float* bias, int R, int C)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)R * C) return;
    const int r = (int)(i % R);
    const int c = (int)(i / R);
    const float* xr = x + (size_t)r * C;
    y[(size_t)r * C + c] = xr[c] * 2.0f + bias[c];
}
"""
FLAT_ARGS = args("y:R,C:output x:R,C bias:C", "R C")
FLAT_SHAPES = [{"name": "main", "R": 8192, "C": 8192}, {"name": "odd", "R": 37, "C": 45}]
FLAT_GRID = ("ceil_div(R * C, 256)",)


def sgemm(tmp: Path, source: str = SGEMM, **kw: Any) -> TaskSpec:
    launch = {"grid": GRID16, "block": ("16", "16"), **kw}
    return spec_of(tmp, source, args=MATMUL_ARGS, shapes=MATMUL_SHAPES, **launch)


def few(tmp: Path, source: str = FEW) -> TaskSpec:
    return spec_of(tmp, source, args=FEW_ARGS, shapes=FEW_SHAPES,
                   grid=("ceil_div(M, 32)", "ceil_div(B, 8)"), block=("32", "8"))


def flat(tmp: Path, source: str = FLAT) -> TaskSpec:
    return spec_of(tmp, source, args=FLAT_ARGS, shapes=FLAT_SHAPES, grid=FLAT_GRID)


# --- the 2-D form: x and y swapped -------------------------------------------------------------

def test_a_naive_sgemm_gets_x_and_y_swapped_in_its_indices_and_its_launch(tmp_path: Path) -> None:
    spec = sgemm(tmp_path)
    a = applied("coalesce", spec)
    (knob,) = a.knobs
    assert (knob.name, knob.values, knob.default) == ("PNCU_COALESCE", (0, 1), 0)
    assert a.sites == ("x and y swapped in the index computations at lines 4, 5: B[e * N + col], "
                       "C[row * N + col] contiguous across a warp; grid (ceil_div(M, 16), "
                       "ceil_div(N, 16)) and block (16, 16) swapped with them",)
    assert a.grid == ("ceil_div(N, 16) if PNCU_COALESCE else ceil_div(M, 16)",
                      "ceil_div(M, 16) if PNCU_COALESCE else ceil_div(N, 16)")
    assert a.block == ("16", "16") and a.swaps_block and not a.writes_block
    swapped = rendered(spec, [a], PNCU_COALESCE=1)
    assert swapped == SGEMM.replace(
        "int row = blockIdx.x * blockDim.x + threadIdx.x;\n    int col = blockIdx.y * "
        "blockDim.y + threadIdx.y;",
        "int row = blockIdx.y * blockDim.y + threadIdx.y;\n    int col = blockIdx.x * "
        "blockDim.x + threadIdx.x;")
    assert rendered(spec, [a], PNCU_COALESCE=0) == SGEMM


def test_a_matrix_times_a_few_vectors_swaps_its_named_thread_indices(tmp_path: Path) -> None:
    spec = few(tmp_path)
    a = applied("coalesce", spec)
    assert a.sites[0].startswith("x and y swapped in the index computations at lines 3, 4, 5: "
                                 "X[(size_t)e * B + b], Y[(size_t)i * B + b] contiguous")
    assert a.block == ("8 if PNCU_COALESCE else 32", "32 if PNCU_COALESCE else 8")
    swapped = rendered(spec, [a], PNCU_COALESCE=1)
    assert "    const int tx = threadIdx.y, ty = threadIdx.x;\n" in swapped
    assert "    const int i = blockDim.y * blockIdx.y + tx;\n" in swapped
    assert "    const int b = blockDim.x * blockIdx.x + ty;\n" in swapped
    assert swapped.count("threadIdx") == 2  # nothing else is touched
    assert rendered(spec, [a]) == FEW


def test_the_launch_is_as_written_at_0_and_swapped_at_1_at_every_shape(tmp_path: Path) -> None:
    for spec, bx, by in ((sgemm(tmp_path), 16, 16), (few(tmp_path), 32, 8)):
        launch = variant(spec, [applied("coalesce", spec)]).overlay["launch"]
        extents = ("M", "N") if "N" in spec.shapes[0].as_dict() else ("M", "B")
        for m, n in ((1, 1), (37, 45), (45, 37), (1000, 3), (4096, 4097)):
            dims = {extents[0]: m, extents[1]: n, "K": 7}
            at = [[[expr.evaluate_int(d, {**dims, "PNCU_COALESCE": v}, "launch")
                    for d in launch[part]] for part in ("grid", "block")] for v in (0, 1)]
            assert at[0] == [[math.ceil(m / bx), math.ceil(n / by)], [bx, by]]
            assert at[1] == [[math.ceil(n / by), math.ceil(m / bx)], [by, bx]]
            grid, block = at[1]  # swapped: x covers the columns, y the rows
            assert grid[0] * block[0] >= n and grid[1] * block[1] >= m


def test_the_swapped_launch_is_written_plainly_once_baked(tmp_path: Path) -> None:
    spec = few(tmp_path)
    launch = variant(spec, [applied("coalesce", spec)]).overlay["launch"]
    assert asm.baked(launch, {"PNCU_COALESCE": 1})["grid"] == ["ceil_div(B, 8)",
                                                               "ceil_div(M, 32)"]
    assert asm.baked(launch, {"PNCU_COALESCE": 0})["block"] == ["32", "8"]
    odd = {"grid": ["(n + 1) // 2 if PNCU_COALESCE else max(m, 2)"]}
    assert asm.baked(odd, {"PNCU_COALESCE": 1}) == {"grid": ["(n + 1) // 2"]}


@pytest.mark.parametrize("old, new, why", [
    ("    if (row", "    __shared__ float s[16];\n    s[0] = 0.0f;\n    if (row", "shared memory"),
    ("        C[row", "        __syncthreads();\n        C[row", "synchronizes"),
    ("        C[row", "        sum += __shfl_xor_sync(0xffffffffu, sum, 1);\n        C[row",
     "synchronizes"),
    ("C[row * N + col] = sum;", "C[row * N + col] = sum + threadIdx.x;",
     "reads threadIdx.x (line 10) outside a declaration of the thread's coordinates"),
    ("int e = 0;", "int e = threadIdx.y - threadIdx.y;", "in a loop"),
    ("int row = blockIdx.x", "int row = (int)A[0] + blockIdx.x", "is computed with A[0]"),
    ("    if (row < M", "    row += 0;\n    if (row < M",
     "row, computed from the built-in indices (line 4), is assigned again"),
    ("{\n    int row", "{\n    dim3 t = threadIdx;\n    int row", "reads threadIdx whole"),
    ("threadIdx.y;", "0;", "never reads threadIdx.y"),
])
def test_the_2d_swap_refuses_what_ties_threads_to_their_place(tmp_path: Path, old: str, new: str,
                                                             why: str) -> None:
    assert old in SGEMM
    assert why in refused("coalesce", sgemm(tmp_path, SGEMM.replace(old, new)))


@pytest.mark.parametrize("line, why", [
    ("cg::this_thread_block().sync();", "synchronizes"),
    ("auto g = cg::this_thread_block(); g.sync();", "synchronizes"),
    ("asm volatile(\"\" ::: \"memory\");", "inline assembly"),
])
def test_cooperative_groups_and_inline_assembly_are_refused(tmp_path: Path, line: str,
                                                            why: str) -> None:
    source = SGEMM.replace("        C[row", f"        {line}\n        C[row")
    assert why in refused("coalesce", sgemm(tmp_path, source))


def test_a_device_function_that_reads_the_indices_is_refused(tmp_path: Path) -> None:
    helper = ("__device__ int lane() { return threadIdx.x % 32; }\n" +
              SGEMM.replace("C[row * N + col] = sum;", "C[row * N + col] = sum * lane();"))
    assert "lane reads threadIdx.x (line 1)" in refused("coalesce", sgemm(tmp_path, helper))


def test_a_coalesced_2d_kernel_is_refused_as_already_unit_stride_in_x(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, COALESCED, args=IMAGE_ARGS, shapes=IMAGE_SHAPES,
                   grid=("ceil_div(W, 16)", "ceil_div(H, 16)"), block=("16", "16"))
    why = refused("coalesce", spec)
    assert why.startswith("y[row * W + col] (line 6) is already unit-stride in threadIdx.x: "
                          "adjacent threads touch adjacent addresses there")


def test_an_access_contiguous_both_ways_does_not_stop_the_swap(tmp_path: Path) -> None:
    hankel = COALESCED.replace("int col = blockIdx.x * blockDim.x + threadIdx.x;\n    int row = "
                               "blockIdx.y * blockDim.y + threadIdx.y;",
                               "int row = blockIdx.x * blockDim.x + threadIdx.x;\n    int col = "
                               "blockIdx.y * blockDim.y + threadIdx.y;").replace(
        "x[row * W + col]", "x[row + col]")
    spec = spec_of(tmp_path, hankel, args=IMAGE_ARGS, shapes=IMAGE_SHAPES,
                   grid=("ceil_div(H, 16)", "ceil_div(W, 16)"), block=("16", "16"))
    assert "y[row * W + col] contiguous across a warp" in applied("coalesce", spec).sites[0]


def test_a_swap_that_only_trades_one_strided_operand_for_another_is_refused(
        tmp_path: Path) -> None:
    why = refused("coalesce", sgemm(tmp_path, TRADE))
    assert why.startswith("the swap would leave the lanes of B[col * K + e] (line 9) apart")
    assert "(weight 17, an access in a loop counting 16 times a level)" in why


@pytest.mark.parametrize("block, grid, why", [
    (("256",), ("ceil_div(M, 256)", "N"), "one thread in y (256 x 1): there is no y to swap"),
    (("256", "1"), ("ceil_div(M, 256)", "N"), "one thread in y"),
    (("1", "256"), ("M", "ceil_div(N, 256)"), "a warp of a 1 x 256 block already spans 32"),
    (("16", "2"), ("ceil_div(M, 16)", "ceil_div(N, 2)"), "a 16 x 2 block already spans 2"),
])
def test_blocks_whose_warps_would_not_change_shape_are_refused(
        tmp_path: Path, block: tuple[str, ...], grid: tuple[str, ...], why: str) -> None:
    assert why in refused("coalesce", sgemm(tmp_path, block=block, grid=grid))


def test_a_grid_too_long_for_the_second_dimension_is_refused(tmp_path: Path) -> None:
    shapes = [{"name": "main", "M": 16 * 70000, "N": 64, "K": 8},
              {"name": "odd", "M": 37, "N": 45, "K": 29}]
    spec = spec_of(tmp_path, SGEMM, args=MATMUL_ARGS, shapes=shapes, grid=GRID16,
                   block=("16", "16"))
    assert "has 70000 blocks at shape main, more than its second may have (65535)" in refused(
        "coalesce", spec)


# --- the 1-D form: a flat index split the wrong way round --------------------------------------

def test_a_flat_index_split_column_major_is_split_row_major(tmp_path: Path) -> None:
    spec = flat(tmp_path)
    a = applied("coalesce", spec)
    assert a.sites == ("r = t % R, c = t / R -> r = t / C, c = t % C: y[r * C + c], "
                       "x[r * C + c], bias[c] contiguous across a warp; the launch as written",)
    assert a.grid is None and a.block is None  # the same threads, other coordinates
    assert rendered(spec, [a], PNCU_COALESCE=1) == FLAT.replace(
        "int r = t % R;\n    int c = t / R;", "int r = t / C;\n    int c = t % C;")
    assert rendered(spec, [a]) == FLAT


def test_a_product_guard_gives_the_extent_and_casts_stay(tmp_path: Path) -> None:
    spec = flat(tmp_path, PRODUCT)
    a = applied("coalesce", spec)
    swapped = rendered(spec, [a], PNCU_COALESCE=1)
    assert "    const int r = (int)(i / C);\n    const int c = (int)(i % C);\n" in swapped
    assert "xr[c]" in a.sites[0]  # through the row pointer
    assert rendered(spec, [a]) == PRODUCT
    product = PRODUCT.replace("(long long)R * C", "C * (long long)(R + 1 - 1)")
    assert "not by R times the other coordinate's extent" in refused(
        "coalesce", flat(tmp_path, product))
    wide = PRODUCT.replace("(long long)R * C", "(long long)(C) * R")
    spec = flat(tmp_path, wide)
    swapped = rendered(spec, [applied("coalesce", spec)], PNCU_COALESCE=1)
    assert "(int)(i / ((long long)(C)))" in swapped


@pytest.mark.parametrize("old, new, why", [
    ("if (r < R && c < C)", "if (c < C)", "does not bound both r and c"),
    ("if (r < R && c < C)", "if (r < R && c < C && t < R * C - 1)",
     "bounds t by R * C - 1, not by R times"),
    ("if (r < R && c < C)", "if (r < C && c < C)", "bounds r by C, not by the divisor R"),
    ("if (r < R && c < C)", "if (r < R && c <= C - 1)", "c <= C - 1 is not an upper bound"),
    ("bias[c];", "bias[c] + blockIdx.x;", "reads blockIdx.x (line 7) beyond its flat index"),
    ("int c = t / R;", "int c = t / C;", "divide t by different numbers"),
    ("bias[c];", "bias[c] + x[t];", "t is read beyond its split and its guard (line 7)"),
    ("    if (r", "    float v = x[r * C + c];\n    if (r", "v is read outside"),
    ("    if (r", "    y[r * C + c] = 0.0f;\n    if (r", "r is read outside what the guard"),
    ("c < C)", "c < bias[0])", "not fixed for the launch (bias[0])"),
    ("    if (r < R && c < C)\n        y", "    y", "no `if` (without else) bounds r and c"),
    ("int r = t % R;", "int r = t - (t / R) * R;", "not split into two coordinates"),
])
def test_the_flat_swap_refuses_guards_and_uses_that_could_change_the_pairs(
        tmp_path: Path, old: str, new: str, why: str) -> None:
    assert old in FLAT
    assert why in refused("coalesce", flat(tmp_path, FLAT.replace(old, new)))


EARLY = FLAT.replace("    if (r < R && c < C)\n        y",
                     "    if (c >= C)\n        return;\n    if (R <= r) return;\n    y")


def test_early_returns_one_after_another_guard_both_coordinates(tmp_path: Path) -> None:
    spec = flat(tmp_path, EARLY)
    swapped = rendered(spec, [applied("coalesce", spec)], PNCU_COALESCE=1)
    assert "int r = t / C;\n    int c = t % C;\n    if (c >= C)\n        return;\n" in swapped
    apart = EARLY.replace("    if (R <= r) return;\n",
                          "    float z = 0.0f;\n    if (R <= r) return;\n")
    assert "does not bound both r and c" in refused("coalesce", flat(tmp_path, apart))


def test_a_local_extent_declared_once_from_scalars_is_fixed(tmp_path: Path) -> None:
    local = FLAT.replace("    int t =", "    const int cols = C;\n    int t =").replace(
        "c < C)", "c < cols)")
    swapped = rendered(spec := flat(tmp_path, local), [applied("coalesce", spec)],
                       PNCU_COALESCE=1)
    assert "int r = t / cols;\n    int c = t % cols;" in swapped
    moving = local.replace("const int cols = C;", "int cols = C;\n    cols += 0;")
    assert "not fixed for the launch" in refused("coalesce", flat(tmp_path, moving))


def test_flat_indices_already_row_major_or_without_a_split_are_refused(tmp_path: Path) -> None:
    row_major = FLAT.replace("y[r * C + c] = x[r * C + c] + bias[c];",
                             "y[c * R + r] = x[c * R + r] + bias[c];")
    assert "y[c * R + r] (line 7) is already unit-stride in r" in refused(
        "coalesce", flat(tmp_path, row_major))
    plain = """extern "C" __global__ void k(float* y, const float* x, const float* bias, int R,
                                   int C)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < R * C) y[t] = x[t] + bias[t % C];
}
"""
    assert "the block is one-dimensional and t is not split" in refused(
        "coalesce", flat(tmp_path, plain))


# --- composition and the catalog -----------------------------------------------------------------

COMPOSED = """extern "C" __global__ void k(float* C, const float* A, const float* B, int M, int N,
                                   int K)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        C[row * N + col] = 0.0f;
        for (int e = 0; e < K; ++e)
            C[row * N + col] += A[row * K + e] * B[e * N + col];
        C[row * N + col] = tanhf(C[row * N + col]);
    }
}
"""


def test_it_composes_with_unroll_readonly_fast_math_and_launch_bounds(tmp_path: Path) -> None:
    spec = sgemm(tmp_path, COMPOSED)
    moves = [applied(m, spec) for m in ("coalesce", "unroll", "readonly", "fast_math")]
    moves.append(applied("launch_bounds", spec, registers=128))
    built = variant(spec, moves)
    assert built.overlay["launch"]["grid"][0] == "ceil_div(N, 16) if PNCU_COALESCE else " \
        "ceil_div(M, 16)"
    text = asm.instance(built, {"PNCU_COALESCE": 1, "PNCU_UNROLL": 4, "PNCU_READONLY": 1,
                                "PNCU_FAST_MATH": "use_fast_math", "PNCU_MIN_BLOCKS": 3})
    assert "int row = blockIdx.y * blockDim.y + threadIdx.y;" in text
    assert "#pragma unroll 4\n        for (int e" in text
    assert "const float* __restrict__ A" in text and "__launch_bounds__(256, 3)" in text


def test_it_never_stands_beside_a_move_that_sets_the_block(tmp_path: Path) -> None:
    spec = sgemm(tmp_path)
    mine = applied("coalesce", spec)
    sizing = Applied("block_size", mine.knobs, block=("PNCU_BLOCK", "16"))
    base = asm.base_of(original_variant(spec), spec, {})
    _, kept, refused_ = asm.assemble(base, [mine, sizing], "m", "n")
    assert [a.move for a in kept] == ["coalesce"]
    assert "one swaps the block's dimensions, the other sets the block" in refused_[0].reason
    assert "not one-dimensional" in refused("block_size", spec)  # (it refuses 2-D anyway)


def test_the_move_answers_wasted_sectors() -> None:
    move = by_name("coalesce")
    assert "uncoalesced_access" in move.answers and set(move.answers) <= set(BOTTLENECKS)
    assert move.knobs == ("PNCU_COALESCE",)


# --- the rewrite run on the CPU, thread by thread ------------------------------------------------

needs_cxx = pytest.mark.skipif(cuda_on_cpu.compiler() is None, reason="no C++ compiler")


def _same(spec: TaskSpec, dims: dict[str, int], out: Path) -> None:
    """The source and its rewrite at both knob values agree at `dims`."""
    a = by_name("coalesce").apply(subject(spec))
    assert isinstance(a, Applied), a
    launch = variant(spec, [a]).overlay["launch"]
    for value in (0, 1):
        text = rendered(spec, [a], PNCU_COALESCE=value)
        cuda_on_cpu.equivalent(spec, text, launch, {"PNCU_COALESCE": value}, dims, out)


@needs_cxx
@pytest.mark.parametrize("block, grid", [
    (("16", "16"), GRID16),
    (("32", "8"), ("ceil_div(M, 32)", "ceil_div(N, 8)")),
    (("8", "32"), ("ceil_div(M, 8)", "ceil_div(N, 32)")),
])
def test_the_swapped_sgemm_computes_what_the_source_does_at_odd_shapes(
        tmp_path: Path, block: tuple[str, ...], grid: tuple[str, ...]) -> None:
    spec = sgemm(tmp_path, block=block, grid=grid)
    # (tall and wide shapes too: a grid left unswapped would not cover them)
    for dims in ({"M": 37, "N": 45, "K": 29}, {"M": 100, "N": 7, "K": 3},
                 {"M": 1, "N": 70, "K": 5}):
        _same(spec, dims, tmp_path)


@needs_cxx
def test_the_swapped_matrix_times_vectors_computes_what_the_source_does(tmp_path: Path) -> None:
    _same(few(tmp_path), {"M": 45, "B": 7, "K": 33}, tmp_path)
    _same(sgemm(tmp_path, COMPOSED), {"M": 37, "N": 45, "K": 29}, tmp_path)


@needs_cxx
@pytest.mark.parametrize("source", [FLAT, PRODUCT, EARLY], ids=["both", "product", "early"])
def test_the_resplit_flat_index_computes_what_the_source_does(tmp_path: Path,
                                                              source: str) -> None:
    spec = flat(tmp_path, source)
    for dims in ({"R": 37, "C": 45}, {"R": 45, "C": 37}, {"R": 1, "C": 300}, {"R": 300, "C": 1}):
        _same(spec, dims, tmp_path)


@needs_cxx
def test_a_guard_on_one_coordinate_is_refused_for_a_reason(tmp_path: Path) -> None:
    """With `c < C` alone the source computes every pair (r < R holds for t % R) and nothing
    else; swapped, r = t / C runs past R for the threads past R * C, which then write beyond
    the array (here into a buffer larger than it, which the source leaves alone)."""
    one = FLAT.replace("if (r < R && c < C)", "if (c < C)")
    assert "does not bound both" in refused("coalesce", flat(tmp_path, one))
    forced = one.replace("int r = t % R;\n    int c = t / R;",
                         "int r = t / C;\n    int c = t % C;")
    R, C = 37, 45
    grid = math.ceil(R * C / 256)
    x = np.arange(grid * 256, dtype=np.float32)
    bias = np.ones(C, np.float32)
    outs = []
    for name, text in (("source", one), ("forced", forced)):
        y = np.full(grid * 256, np.nan, np.float32)
        cuda_on_cpu.build(text, "k", tmp_path, name).launch(
            grid, 256, [y, x, bias, ctypes.c_int(R), ctypes.c_int(C)])
        outs.append(y)
    assert np.array_equal(outs[0][:R * C], outs[1][:R * C])  # every pair the same...
    assert np.isnan(outs[0][R * C:]).all() and not np.isnan(outs[1][R * C:]).any()  # ...and more


# the extra kernels written for coalesce (extra/ holds other moves' calibration kernels too)
EXTRA = [Path(__file__).resolve().parents[2] / "examples" / "moves" / "structural" / "extra" /
         f"{name}.toml" for name in ("sgemm_rowx", "colbias_flat", "ger_rank1", "grad_mag_flat",
                                     "chan_affine_2d")]


@needs_cxx
@pytest.mark.parametrize("path", EXTRA, ids=lambda p: p.stem)
def test_the_extra_calibration_kernels_are_swapped_and_compute_the_same(tmp_path: Path,
                                                                       path: Path) -> None:
    """Every kernel written for coalesce in examples/moves/structural/extra (three of them held
    aside while the move was written) takes the swap, which computes what it does at its odd
    shape and at a tall and a wide one (sizes no block or warp divides), at both knob
    values."""
    spec = load_spec(path)
    odd = spec.shape_named("odd").as_dict()
    big, small = max(odd.values()), min(odd.values())
    _same(spec, odd, tmp_path)
    for tall in (True, False):
        dims = {k: (big * 2 + 1 if (v == max(odd.values())) == tall else small // 4 + 1)
                for k, v in odd.items()}
        _same(spec, dims, tmp_path)
