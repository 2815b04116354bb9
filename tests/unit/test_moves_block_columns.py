"""block_columns: a block-per-column reduction re-laid over COLS adjacent columns a block
(adjacent threads, adjacent columns), blockDim.x / COLS row groups striding the rows, the
block's tree replaced by a per-column combination. The rewrite on snippets in several styles,
its default giving back the source and the launch, its refusals, its composition, its grid at
every shape, and the rewritten kernels run thread by thread on the CPU against their sources
at odd shapes for every COLS."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.spec import expr
from tests.fakes import cuda_on_cpu
from tests.fakes.moves import applied, refused, rendered, spec_of, variant
from tests.move_kernels.block_columns import (
    COL_ARGS,
    COL_SHAPES,
    COLMAX,
    COLMAX_ARGS,
    COLMEAN,
    COLMEAN_ARGS,
    COLSUM,
    SOURCES,
    columns,
)


def test_a_block_takes_cols_adjacent_columns_and_combines_them_per_column(
        tmp_path: Path) -> None:
    spec = columns(tmp_path)
    a = applied("block_columns", spec)
    assert [(k.name, k.values, k.default) for k in a.knobs] == [("PNCU_COLS", (1, 8, 16, 32),
                                                                 1)]
    assert a.grid == ("ceil_div(C, PNCU_COLS)",) and a.block is None and not a.writes_block
    assert a.sites == ("column c of C: COLS adjacent columns a block, 256 / COLS row groups "
                       "down them (the loop at line 6); the tree over buf at line 10 combines "
                       "each column's row groups; grid C -> ceil_div(C, COLS)",)
    assert rendered(spec, [a]) == COLSUM
    assert rendered(spec, [a], PNCU_COLS=8) == """\
extern "C" __global__ void k(const float* x, float* out, int N, int C)
{
    __shared__ float buf[256];
    const long long pncu_col = (long long)blockIdx.x * 8 + threadIdx.x % 8;  // 8 adjacent \
columns a block
    const int c = (int)(pncu_col < C ? pncu_col : C - 1);  // past the last column: work on \
it, store nothing
    float sum = 0.f;
    for (int r = threadIdx.x / 8; r < N; r += blockDim.x / 8)
        sum += x[(long long)r * C + c];
    buf[threadIdx.x] = sum;
    __syncthreads();
    {  // each of the block's 8 columns: its row groups combined across a warp by shuffles, \
then across the warps
        float pncu_v = buf[threadIdx.x];
        for (int pncu_o = 16; pncu_o > 8 / 2; pncu_o /= 2) {
            const float pncu_u = __shfl_down_sync(0xffffffffu, pncu_v, pncu_o);
            pncu_v += pncu_u;
        }
        __shared__ float pncu_cols[32 * 8];
        if (threadIdx.x % 32 < 8) pncu_cols[threadIdx.x / 32 * 8 + threadIdx.x % 32] = pncu_v;
        __syncthreads();
        if (threadIdx.x < 8) {
            pncu_v = pncu_cols[threadIdx.x];
            for (int pncu_q = 1; pncu_q < blockDim.x / 32; ++pncu_q) {
                const float pncu_u = pncu_cols[pncu_q * 8 + threadIdx.x];
                pncu_v += pncu_u;
            }
            buf[threadIdx.x] = pncu_v;
        }
        __syncthreads();
    }
    if (threadIdx.x < 8 && pncu_col < C)
        out[c] = buf[threadIdx.x % 8];
}
"""


def test_the_other_styles_are_read_and_rewritten_alike(tmp_path: Path) -> None:
    spec = columns(tmp_path, COLMAX, COLMAX_ARGS, "128")
    a = applied("block_columns", spec)
    on = rendered(spec, [a], PNCU_COLS=32)
    assert "    const unsigned col = (unsigned)(pncu_col < C ? pncu_col : C - 1);" in on
    assert "    for (int r = t / 32; r < N; r += 128 / 32) {\n" in on
    assert "pncu_v = fmaxf(pncu_v, pncu_u);" in on
    assert "__shared__ float pncu_cols[32 * 32];" in on
    assert "    const float top = best[threadIdx.x % 32];\n" \
           "    if (threadIdx.x < 32 && pncu_col < C) {\n        peak[col] = top;\n" in on
    assert rendered(spec, [a]) == COLMAX
    mean = columns(tmp_path, COLMEAN, COLMEAN_ARGS)
    on = rendered(mean, [applied("block_columns", mean)], PNCU_COLS=16)
    assert "    const int j = (int)(pncu_col < ncols ? pncu_col : ncols - 1);" in on
    assert "    const float* p = x + j;\n" in on
    assert "    if (threadIdx.x < 16 && pncu_col < ncols) mean[j] = (float)(part[threadIdx.x % " \
           "16] / rows);" in on


@pytest.mark.parametrize("cols", [1, 8, 16, 32])
def test_the_grid_covers_every_column_at_every_shape(tmp_path: Path, cols: int) -> None:
    """COLS columns a block: ceil(C / COLS) blocks, none without a column; COLS = 1 is the
    grid as written."""
    built = variant(spec := columns(tmp_path), [applied("block_columns", spec)])
    grid = built.overlay["launch"]["grid"][0]
    assert built.overlay["launch"]["block"] == ["256"]
    for c in (1, 7, 61, 3072, 3073):
        blocks = expr.evaluate_int(grid, {"C": c, "PNCU_COLS": cols}, "grid")
        assert blocks * cols >= c > (blocks - 1) * cols
        assert blocks == math.ceil(c / cols)


@pytest.mark.parametrize(("old", "new", "why"), [
    ("sum += x[(long long)r * C + c];", "sum += x[(long long)c * N + r];",
     "reads x[(long long)c * N + r] at adjacent addresses across the block's threads"),
    ("sum += x[(long long)r * C + c];", "sum += x[(long long)r * C + 2 * c];",
     "no load of the loop at line 6 adds c to its address"),
    ("sum += x[(long long)r * C + c];", "{ sum += x[(long long)r * C + c]; out[r] = sum; }",
     "does not only accumulate sum"),
    ("    buf[threadIdx.x] = sum;", "    for (int r = 0; r < 2; ++r) sum *= 0.5f;\n"
     "    buf[threadIdx.x] = sum;", "not one loop (2 loops"),
    ("float sum = 0.f;", "float sum = 1.f;", "the sum sum does not start at a literal 0"),
    ("buf[threadIdx.x] = sum;", "buf[threadIdx.x] = sum * 2.0f;", "is not followed by"),
    ("    __syncthreads();\n    for (int s", "    for (int s", "is not followed by"),
    ("buf[threadIdx.x] += buf[threadIdx.x + s];",
     "buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + s]);",
     "accumulates sum by + and the tree combines by fmaxf"),
    ("    if (threadIdx.x == 0)\n        out[c] = buf[0];", "    out[c] = buf[0];",
     "stores or uses the column outside an `if (threadIdx.x == 0)`"),
    ("sum += x[(long long)r * C + c];", "sum += x[(long long)r * C + c] * (threadIdx.x & 1);",
     "reads the thread's index beyond its rows"),
    ("        out[c] = buf[0];", "        out[c] = buf[0] + threadIdx.x;",
     "thread 0's work at line 15 reads the thread's index"),
    ("        out[c] = buf[0];", "        out[c] = buf[0] + sum;",
     "sum, a thread's part of its column, is used after the tree"),
    ("        out[c] = buf[0];", "        out[c] = buf[0];\n        buf[1] = 0.0f;",
     "buf[1] is stored after the tree"),
    ("    if (threadIdx.x == 0)", "    if (threadIdx.x == 1)",
     "stores or uses the column outside an `if (threadIdx.x == 0)`"),
    ("    if (threadIdx.x == 0)\n        out[c] = buf[0];\n", "",
     "no `if (threadIdx.x == 0)`"),
    ("        out[c] = buf[0];", "        out[c] = buf[0] * gridDim.x;",
     "reads gridDim.x outside its column index"),
    ("int r = threadIdx.x;", "int r = 0;", "does not stride the rows by the block"),
    ("r += blockDim.x", "r += 128", "does not stride the rows by the block"),
    ("float sum = 0.f;", "float sum = 0.f;\n    sum = 0.f;", "precedes the column's loop"),
    ("int c = blockIdx.x;", "int c = blockIdx.x + 0;", "no column index of a block"),
])
def test_block_columns_refuses_what_it_cannot_re_lay(tmp_path: Path, old: str, new: str,
                                                     why: str) -> None:
    source = COLSUM.replace(old, new)
    assert source != COLSUM
    assert why in refused("block_columns", columns(tmp_path, source))


def test_block_columns_refuses_a_launch_it_cannot_follow(tmp_path: Path) -> None:
    assert "no scalar argument of the kernel" in refused(
        "block_columns", columns(tmp_path, grid="ceil_div(C, 1)"))
    assert "not one-dimensional" in refused("block_columns", spec_of(
        tmp_path, COLSUM, args=COL_ARGS, grid=("C", "2"), shapes=COL_SHAPES))
    assert "a whole number of warps" in refused("block_columns", columns(tmp_path, block="48"))
    used = COLSUM.replace("    for (int r = threadIdx.x;", "    int r;\n    for (r = threadIdx.x;")\
        .replace("out[c] = buf[0];", "out[c] = buf[0] + r;")
    assert "which it steps" in refused("block_columns", columns(tmp_path, used))


def test_a_rows_part_must_not_depend_on_the_thread_that_takes_it(tmp_path: Path) -> None:
    """Re-laid, row r is taken by another thread: a value computed from the thread's index
    (a lane) would weigh it otherwise; one computed from the column or in the loop is fine."""
    lane = COLSUM.replace("    float sum = 0.f;", "    const int lane = threadIdx.x % 32;\n"
                          "    float sum = 0.f;").replace("x[(long long)r * C + c];",
                                                       "x[(long long)r * C + c] * lane;")
    assert "reads the thread's index beyond its rows" in refused("block_columns",
                                                                 columns(tmp_path, lane))
    fine = lane.replace("threadIdx.x % 32", "c % 32")
    assert applied("block_columns", columns(tmp_path, fine))


def test_block_columns_composes_with_unroll(tmp_path: Path) -> None:
    """unroll's pragma stands above the re-laid loop; the defaults give back the source."""
    for source, args, cols in ((COLSUM, COL_ARGS, 16), (COLMEAN, COLMEAN_ARGS, 8)):
        spec = columns(tmp_path, source, args)
        built = variant(spec, [applied(m, spec) for m in ("block_columns", "unroll")])
        assert built.overlay["launch"]["grid"] == ["ceil_div(C, PNCU_COLS)"]
        text = asm.instance(built, {"PNCU_COLS": cols, "PNCU_UNROLL": 4})
        assert "    #pragma unroll 4\n    for (int " in text
        assert f" = threadIdx.x / {cols}; " in text and f"+= blockDim.x / {cols})" in text
        assert asm.instance(built, {"PNCU_COLS": 1, "PNCU_UNROLL": 0}) == source


# --- the rewrite run on the CPU, thread by thread --------------------------------------------

needs_cxx = pytest.mark.skipif(cuda_on_cpu.compiler() is None, reason="no C++ compiler")


ODD = {"colsum": {"N": 37, "C": 61}, "colmax": {"N": 129, "C": 19}, "colmean": {"N": 257,
                                                                        "C": 23}}


@needs_cxx
@pytest.mark.parametrize(("name", "cols", "dims"), [
    *((name, cols, ODD[name]) for name in SOURCES for cols in (8, 16, 32)),
    ("colsum", 32, {"N": 300, "C": 5}),  # fewer columns than a block takes
    ("colmax", 8, {"N": 7, "C": 45}),  # fewer rows than a column has row groups
])
def test_the_rewrite_computes_what_the_source_does(tmp_path: Path, name: str, cols: int,
                                                   dims: dict[str, int]) -> None:
    source, args, block = SOURCES[name]
    spec = columns(tmp_path, source, args, block)
    built = variant(spec, [applied("block_columns", spec)])
    point = {"PNCU_COLS": cols}
    errors = cuda_on_cpu.equivalent(spec, asm.instance(built, point), built.overlay["launch"],
                                    point, dims, tmp_path)
    if name == "colmax":
        assert set(errors.values()) == {0.0}  # a maximum is exact in any order
