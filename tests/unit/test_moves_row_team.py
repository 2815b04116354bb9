"""row_team: a thread per row becomes a team of threads per row. The rewrite on snippets (both
layouts), its default giving back the source, every refusal, its composition and its launch at
every shape; and every team size run on the CPU emulator against the source at odd shapes (rows
not a multiple of the rows a block takes, columns not a multiple of the team), barriers and
warp shuffles completed only when every thread reaches them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant
from pragma_ncu.spec import expr
from tests.fakes import cuda_on_cpu
from tests.fakes.moves import applied, refused, rendered, spec_of, variant
from tests.move_kernels.row_team import ROW_ARGS, ROW_SHAPES, SOFTMAX, softmax

# a thread per column, two loops down it, a value between them, the guard holding the work
COLUMNS = """extern "C" __global__ void k(const float* x, float* mean, float* var, int N, int C)
{
    const int c = threadIdx.x + blockIdx.x * blockDim.x;
    if (c < C) {
        float s = 0.0f;
        for (int r = 0; r < N; r++)
            s += x[(long long)r * C + c];
        const float m = s / N;
        float q = 0.0f;
        for (int r = 0; r < N; r++) {
            const float d = x[(long long)r * C + c] - m;
            q += d * d;
        }
        mean[c] = m;
        var[c] = q / N;
    }
}
"""
COLUMN_ARGS = [{"name": "x", "dtype": "fp32", "shape": ["N", "C"], "role": "input"},
               {"name": "mean", "dtype": "fp32", "shape": ["C"], "role": "output"},
               {"name": "var", "dtype": "fp32", "shape": ["C"], "role": "output"},
               {"name": "N", "dtype": "int32", "role": "scalar", "value": "N"},
               {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]
COLUMN_SHAPES = [{"name": "main", "N": 4096, "C": 2048}, {"name": "odd", "N": 45, "C": 301}]


def columns(tmp: Path, source: str = COLUMNS):  # type: ignore[no-untyped-def]
    return spec_of(tmp, source, args=COLUMN_ARGS, shapes=COLUMN_SHAPES,
                   grid=("ceil_div(C, 256)",))


def test_a_row_gets_a_team_of_adjacent_threads(tmp_path: Path) -> None:
    spec = softmax(tmp_path)
    a = applied("row_team", spec)
    (knob,) = a.knobs
    assert knob.name == "PNCU_TEAM" and knob.values == (1, 32, 64, 128, 256, 512, 1024)
    assert a.block == ("max(256, PNCU_TEAM)",) and a.writes_block
    assert a.grid == ("ceil_div((N), max(256, PNCU_TEAM) // PNCU_TEAM)",)  # the guard's rows
    warp = rendered(spec, [a], PNCU_TEAM=32)
    assert "const int pncu_lane = threadIdx.x % 32;" in warp
    assert "int r = (int)(blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32);" in warp
    assert ("if (!pncu_live) { if ((long long)((N) - 1) < 0 || "
            "((blockIdx.x * (blockDim.x / 32)) >= N)) return; r = (N) - 1; }") in warp
    assert warp.count("for (int j = 0 + pncu_lane; j < C; j += 32)") == 3
    assert "m = max(m, __shfl_xor_sync(0xffffffffu, m, pncu_o));" in warp  # if-form max
    assert "s = s + __shfl_xor_sync(0xffffffffu, s, pncu_o);" in warp  # a double sum
    assert "if (pncu_live) o[j] = expf(xr[j] - m);" in warp
    assert "if (pncu_live && pncu_lane == 0) { sums[r] = (float)s; }" in warp
    assert "__syncthreads" not in warp  # a warp needs no barrier
    block = rendered(spec, [a], PNCU_TEAM=256)
    assert "__shared__ double pncu_s_1[32];" in block and block.count("__syncthreads();") == 4
    assert rendered(spec, [a], PNCU_TEAM=1) == SOFTMAX


def test_a_walk_down_columns_gets_a_team_of_threads_a_column_apart(tmp_path: Path) -> None:
    spec = columns(tmp_path)
    a = applied("row_team", spec)
    assert a.knobs[0].values == (1, 2, 4, 8, 16, 32) and a.block == ("256",)
    eight = rendered(spec, [a], PNCU_TEAM=8)
    assert "const int pncu_rows = blockDim.x / 8;" in eight
    assert "const int c = (int)" not in eight and \
        "int c = (int)(blockIdx.x * pncu_rows + threadIdx.x % pncu_rows);" in eight
    assert "for (int r = 0 + pncu_lane; r < N; r += 8)" in eight
    assert "s = s + pncu_s_0[pncu_w + pncu_q * pncu_rows];" in eight
    assert rendered(spec, [a], PNCU_TEAM=1) == COLUMNS


@pytest.mark.parametrize("team", [32, 64, 256, 1024])
def test_the_grid_covers_every_row_at_every_shape(tmp_path: Path, team: int) -> None:
    built = variant(spec := softmax(tmp_path), [applied("row_team", spec)])
    launch = built.overlay["launch"]
    for n in (1, 7, 37, 8192, 8193):
        env = {"N": n, "PNCU_TEAM": team}
        blocks = expr.evaluate_int(launch["grid"][0], env, "grid")
        rows = expr.evaluate_int(launch["block"][0], env, "block") // team
        assert blocks * rows >= n and (blocks - 1) * rows < n


@pytest.mark.parametrize("old, new, why", [
    ("    sums[r] = (float)s;\n", "    sums[r] = (float)s;\n    __syncthreads();\n",
     "synchronizes"),
    ("        s += o[j];\n", "        s += o[j];\n        s *= 0.5;\n", "other than by one sum"),
    ("        o[j] = expf(xr[j] - m);\n", "        o[0] = expf(xr[j] - m);\n",
     "does not move with the loop's variable"),
    ("for (int j = 0; j < C; ++j) o[j] /= (float)s;", "for (int j = 0; j < C; ++j) "
     "o[j] /= o[C - 1 - j];", "which another thread of the team may have stored"),
    ("    double s = 0.0;\n", "    double s = 1.0;\n", "does not start at a literal 0"),
    ("    sums[r] = (float)s;\n", "    sums[r] = (float)s;\n    if (s > 1e30) return;\n",
     "returns"),
    ("    sums[r] = (float)s;\n", "    sums[r] = (float)(s += 1.0);\n", "changes s"),
    ("        if (xr[j] > m) m = xr[j];\n", "        if (xr[j] > m) m = xr[j];\n        "
     "if (m > 9.f) break;\n", "breaks out"),
])
def test_row_team_refuses_what_two_threads_of_a_team_could_disagree_on(
        tmp_path: Path, old: str, new: str, why: str) -> None:
    assert old in SOFTMAX
    assert why in refused("row_team", softmax(tmp_path, SOFTMAX.replace(old, new)))


def test_row_team_leaves_kernels_without_a_row_of_their_own(tmp_path: Path) -> None:
    element = """extern "C" __global__ void k(const float* x, float* out, float* sums, int N, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    sums[r] = x[r];
}
"""
    assert "no loop of its own" in refused("row_team", softmax(tmp_path, element))
    one_loop = COLUMNS.replace("""        const float m = s / N;
        float q = 0.0f;
        for (int r = 0; r < N; r++) {
            const float d = x[(long long)r * C + c] - m;
            q += d * d;
        }
        mean[c] = m;
        var[c] = q / N;""", """        mean[c] = s / N;
        var[c] = s;""")
    assert "split_reduction deals this one loop out" in refused("row_team",
                                                                 columns(tmp_path, one_loop))
    assert "block size is an expression" in refused(
        "row_team", spec_of(tmp_path, SOFTMAX, args=ROW_ARGS, shapes=ROW_SHAPES,
                            grid=("ceil_div(N, B)",), block=("B",),
                            params={"B": {"default": 100, "values": [100]}}))


def test_row_team_and_block_size_cannot_both_hold(tmp_path: Path) -> None:
    spec = softmax(tmp_path)
    moves = [applied("row_team", spec), applied("readonly", spec)] + \
        [applied("block_size", spec)]
    _, kept, refused_ = asm.assemble(asm.base_of(original_variant(spec), spec, {}), moves, "m",
                                     "n")
    assert [a.move for a in kept] == ["row_team", "readonly"]
    assert refused_[0].move == "block_size" and "cannot both hold" in refused_[0].reason


# --- every team size on the CPU emulator --------------------------------------------------

needs_cxx = pytest.mark.skipif(cuda_on_cpu.compiler() is None, reason="no C++ compiler")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("emulated")


@needs_cxx
@pytest.mark.parametrize("team", [32, 64, 256, 1024])
def test_every_row_team_computes_what_the_thread_per_row_did(tmp_path: Path, built: Path,
                                                           team: int) -> None:
    spec = softmax(tmp_path)
    a = applied("row_team", spec)
    launch = variant(spec, [a]).overlay["launch"]
    text = rendered(spec, [a], PNCU_TEAM=team)
    for dims in ({"N": 37, "C": 101}, {"N": 5, "C": 31}):  # a team past the last row too
        cuda_on_cpu.equivalent(spec, text, launch, {"PNCU_TEAM": team}, dims, built)


@needs_cxx
@pytest.mark.parametrize("team", [2, 8, 32])
def test_every_column_team_computes_what_the_thread_per_column_did(tmp_path: Path, built: Path,
                                                                 team: int) -> None:
    spec = columns(tmp_path)
    a = applied("row_team", spec)
    launch = variant(spec, [a]).overlay["launch"]
    text = rendered(spec, [a], PNCU_TEAM=team)
    cuda_on_cpu.equivalent(spec, text, launch, {"PNCU_TEAM": team}, {"N": 45, "C": 301}, built)


def test_the_grid_of_the_column_layout_covers_every_column(tmp_path: Path) -> None:
    built_ = variant(spec := columns(tmp_path), [applied("row_team", spec)])
    for c in (1, 255, 301, 2048):
        for team in (2, 8, 32):
            blocks = expr.evaluate_int(built_.overlay["launch"]["grid"][0],
                                       {"C": c, "PNCU_TEAM": team}, "grid")
            assert blocks * (256 // team) >= c and blocks == math.ceil(c / (256 // team))


# a thread per row of halves in `while` loops, the loop variable reset and reused
RESET = """#include <cuda_fp16.h>
extern "C" __global__ void k(const __half* x, __half* out, float* sums, int N, int C)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;
    const __half* xr = x + (size_t)row * C;
    float ss = 0.0f;
    int j = 0;
    while (j < C) {
        float v = __half2float(xr[j]);
        ss += v * v;
        j++;
    }
    j = 0;
    while (j < C) {
        out[(size_t)row * C + j] = __float2half(__half2float(xr[j]) / (ss + 1.0f));
        j++;
    }
    sums[row] = ss;
}
"""
HALF_ROW_ARGS = [{**a, "dtype": "fp16"} if a["name"] in ("x", "out") else a for a in ROW_ARGS]


@needs_cxx
def test_a_loop_variable_reset_before_its_next_loop_is_no_use_after_the_loop(
        tmp_path: Path, built: Path) -> None:
    spec = spec_of(tmp_path, RESET, args=HALF_ROW_ARGS, shapes=ROW_SHAPES,
                   grid=("ceil_div(N, 256)",))
    a = applied("row_team", spec)
    text = rendered(spec, [a], PNCU_TEAM=64)
    assert text.count("j += pncu_lane;") == 2 and text.count("j += 64;") == 2
    launch = variant(spec, [a]).overlay["launch"]
    cuda_on_cpu.equivalent(spec, text, launch, {"PNCU_TEAM": 64}, {"N": 9, "C": 101}, built)
    reads = RESET.replace("    sums[row] = ss;\n", "    sums[row] = ss + j;\n")
    assert "uses j, which it steps" in refused(
        "row_team", spec_of(tmp_path, reads, args=HALF_ROW_ARGS, shapes=ROW_SHAPES,
                            grid=("ceil_div(N, 256)",)))


# a thread per row whose stores are the unbraced branches of an if/else (a masked row)
MASKED = """extern "C" __global__ void k(const float* x, float* out, int N, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    int last = r % C;
    float s = 0.0f;
    for (int j = 0; j <= last; ++j) {
        s += x[(long long)r * C + j];
    }
    for (int j = 0; j < C; ++j) {
        if (j <= last)
            out[(long long)r * C + j] = x[(long long)r * C + j] / (s + 1.0f);
        else
            out[(long long)r * C + j] = -1.0f;
    }
}
"""
MASKED_ARGS = [a for a in ROW_ARGS if a["name"] != "sums"]


@needs_cxx
def test_a_store_in_an_unbraced_branch_keeps_its_else(tmp_path: Path, built: Path) -> None:
    spec = spec_of(tmp_path, MASKED, args=MASKED_ARGS, shapes=ROW_SHAPES,
                   grid=("ceil_div(N, 256)",))
    a = applied("row_team", spec)
    text = rendered(spec, [a], PNCU_TEAM=32)
    assert "{ if (pncu_live) out[(long long)r * C + j] = -1.0f; }" in text
    launch = variant(spec, [a]).overlay["launch"]
    cuda_on_cpu.equivalent(spec, text, launch, {"PNCU_TEAM": 32}, {"N": 37, "C": 45}, built)


# a thread per row of each of B batches: the batch is the grid's y
BATCHED = """extern "C" __global__ void k(const float* x, float* out, int N, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    long long base = ((long long)blockIdx.y * N + r) * C;
    float m = -INFINITY;
    for (int j = 0; j < C; ++j) m = fmaxf(m, x[base + j]);
    for (int j = 0; j < C; ++j) out[base + j] = x[base + j] - m;
}
"""
BATCHED_ARGS = [{"name": "x", "dtype": "fp32", "shape": ["B", "N", "C"], "role": "input"},
                {"name": "out", "dtype": "fp32", "shape": ["B", "N", "C"], "role": "output"},
                {"name": "N", "dtype": "int32", "role": "scalar", "value": "N"},
                {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]


@needs_cxx
def test_a_batch_dimension_of_the_grid_is_kept(tmp_path: Path, built: Path) -> None:
    spec = spec_of(tmp_path, BATCHED, args=BATCHED_ARGS, grid=("ceil_div(N, 128)", "B"),
                   block=("128",), shapes=[{**s, "B": 3} for s in ROW_SHAPES])
    a = applied("row_team", spec)
    assert a.grid is not None and a.grid[1] == "B"
    launch = variant(spec, [a]).overlay["launch"]
    for team in (32, 256):
        cuda_on_cpu.equivalent(spec, rendered(spec, [a], PNCU_TEAM=team), launch,
                               {"PNCU_TEAM": team}, {"B": 3, "N": 37, "C": 45}, built)
