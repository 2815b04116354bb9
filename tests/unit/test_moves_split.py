"""split_reduction: each output's reduction loop dealt out to SPLIT threads of a block, the
parts met in shared memory, the grid SPLIT times larger. The rewrite on snippets (it applies,
keeps what it must, refuses what it cannot deal out), its default giving back the source, and
its launch at every shape."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.spec import expr
from tests.fakes.moves import applied, base_of, refused, rendered, spec_of, variant

COLSUM = """extern "C" __global__ void k(const float* x, float* s, int R, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float acc = 0.0f;
    for (int r = 0; r < R; ++r) acc += x[(long long)r * C + c];
    s[c] = acc;
}
"""
COLSUM_ARGS = [
    {"name": "x", "dtype": "fp32", "shape": ["R", "C"], "role": "input"},
    {"name": "s", "dtype": "fp32", "shape": ["C"], "role": "output"},
    {"name": "R", "dtype": "int32", "role": "scalar", "value": "R"},
    {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]
DEALT = "whose iterations can be dealt out"  # the refusal of a loop read as not steppable
COLSUM_SHAPES = [{"name": "main", "R": 4096, "C": 16384}, {"name": "odd", "R": 37, "C": 1001}]
# Two outputs a thread, the guard holding the work, a max beside a sum, a strided loop.
MOMENTS = """extern "C" __global__ void k(const float* x, float* mean, float* peak, int R, int C)
{
    int c = threadIdx.x + blockIdx.x * blockDim.x;
    if (c < C) {
        float sum = 0.f, top = -INFINITY;
        const float* col = x + c;
        for (int r = 0; r < R; r += 2) {
            const float v = col[(size_t)r * C];
            sum += v;
            top = fmaxf(top, v);
        }
        mean[c] = sum / R;
        peak[c] = top;
    }
}
"""
MOMENTS_ARGS = [
    {"name": "x", "dtype": "fp32", "shape": ["R", "C"], "role": "input"},
    {"name": "mean", "dtype": "fp32", "shape": ["C"], "role": "output"},
    {"name": "peak", "dtype": "fp32", "shape": ["C"], "role": "output"},
    {"name": "R", "dtype": "int32", "role": "scalar", "value": "R"},
    {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]


def colsum(tmp: Path, source: str = COLSUM,  # type: ignore[no-untyped-def]
           grid: tuple[str, ...] = ("ceil_div(C, 256)",), block: tuple[str, ...] = ("256",)):
    return spec_of(tmp, source, args=COLSUM_ARGS, grid=grid, block=block, shapes=COLSUM_SHAPES)


def split_at(tmp: Path, source: str, split: int) -> str:
    """`source` (a column sum's spec) with split_reduction alone at PNCU_SPLIT = `split`."""
    spec = colsum(tmp, source)
    return rendered(spec, [applied("split_reduction", spec)], PNCU_SPLIT=split)


def test_split_deals_the_loop_out_and_meets_the_parts_in_shared_memory(tmp_path: Path) -> None:
    spec = colsum(tmp_path)
    a = applied("split_reduction", spec)
    assert a.knobs[0].name == "PNCU_SPLIT" and a.knobs[0].default == 1
    assert a.knobs[0].values == (1, 2, 4, 8, 16)
    assert a.grid == ("ceil_div((ceil_div(C, 256)) * (256), (256) // PNCU_SPLIT)",)
    assert rendered(spec, [a], PNCU_SPLIT=1) == COLSUM
    on = rendered(spec, [a], PNCU_SPLIT=8)
    assert on == """extern "C" __global__ void k(const float* x, float* s, int R, int C)
{
    const int pncu_outputs = blockDim.x / 8;  // outputs a block covers, 8 threads each
    const int pncu_part = threadIdx.x / pncu_outputs;
    const int c = (int)blockIdx.x * pncu_outputs + threadIdx.x % pncu_outputs;
    float acc = 0.0f;
    if ((c < C) && pncu_part < 8) {
        for (int r = 0 + pncu_part; r < R; r += 8) acc += x[(long long)r * C + c];
    }
    __shared__ float pncu_acc[256];
    pncu_acc[threadIdx.x] = acc;
    __syncthreads();
    if (pncu_part == 0) {
        for (int pncu_q = 1; pncu_q < 8; ++pncu_q) {
            acc += pncu_acc[pncu_q * pncu_outputs + threadIdx.x];
        }
    }
    if (pncu_part == 0 && (c < C)) {
        s[c] = acc;
    }
}
"""


@pytest.mark.parametrize("split", [1, 2, 4, 8, 16])
def test_the_grid_covers_every_output_at_every_shape(tmp_path: Path, split: int) -> None:
    """blockDim.x / SPLIT outputs a block, so ceil(C / that) blocks or more; SPLIT = 1 is the
    launch as written."""
    spec = colsum(tmp_path)
    grid = applied("split_reduction", spec).grid
    assert grid is not None
    for dims in ({"C": 16384}, {"C": 1001}, {"C": 1}, {"C": 257}):
        blocks = expr.evaluate(grid[0], {**dims, "PNCU_SPLIT": split})
        outputs = 256 // split
        assert blocks * outputs >= dims["C"] and (blocks - 1) * outputs < dims["C"] + 256
        if split == 1:
            assert blocks == math.ceil(dims["C"] / 256)


def test_split_reads_a_guarded_block_with_a_sum_and_a_max(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, MOMENTS, args=MOMENTS_ARGS, grid=("ceil_div(C, 256)",),
                   shapes=COLSUM_SHAPES)
    a = applied("split_reduction", spec)
    assert rendered(spec, [a]) == MOMENTS
    on = rendered(spec, [a], PNCU_SPLIT=4)
    assert "    int c = (int)blockIdx.x * pncu_outputs + threadIdx.x % pncu_outputs;\n" in on
    assert "    float sum = 0.f, top = -INFINITY;\n    if ((c < C) && pncu_part < 4) {\n" \
           "        const float* col = x + c;\n" \
           "        for (int r = 0 + pncu_part * (2); r < R; r += (2) * 4) {" in on
    assert "            sum += pncu_sum[pncu_q * pncu_outputs + threadIdx.x];\n" \
           "            top = fmaxf(top, pncu_top[pncu_q * pncu_outputs + threadIdx.x]);\n" in on
    assert "    if (pncu_part == 0 && (c < C)) {\n        mean[c] = sum / R;\n" \
           "        peak[c] = top;\n    }\n}\n" in on
    assert on.count("float sum = 0.f") == 1


def test_split_composes_with_unroll_and_holds_the_block_it_sizes_its_slots_by(
        tmp_path: Path) -> None:
    """The moves a small grid of reduction loops calls for, in one template: the unroll pragma
    stays on the dealt-out loop. The parts' slots are sized by the block the spec writes (256
    floats, not 1024: less shared memory, more blocks an SM), so block_size, which would search
    the block, cannot hold beside it; a block the spec computes gets slots for 1024 threads."""
    spec = colsum(tmp_path)
    split, unroll = applied("split_reduction", spec), applied("unroll", spec)
    assert split.writes_block
    on = rendered(spec, [split, unroll], PNCU_SPLIT=2, PNCU_UNROLL=4)
    assert "    if ((c < C) && pncu_part < 2) {\n    #pragma unroll 4\n        for (int r = 0 + " \
           "pncu_part; r < R; r += 2)" in on
    assert asm.instance(variant(spec, [split, unroll]), {"PNCU_SPLIT": 1, "PNCU_UNROLL": 0}) \
        == COLSUM
    _, kept, refused_ = asm.assemble(base_of(spec), [split, applied("block_size", spec)],
                                     "m", "")
    assert [a.move for a in kept] == ["split_reduction"]
    assert "cannot both hold" in refused_[0].reason
    computed = spec_of(tmp_path, COLSUM, args=COLSUM_ARGS, grid=("ceil_div(C, B)",),
                       block=("B",), shapes=COLSUM_SHAPES,
                       params={"B": {"default": 256, "values": [128, 256]}})
    wide = applied("split_reduction", computed)
    assert not wide.writes_block
    assert "__shared__ float pncu_acc[1024];" in rendered(computed, [wide], PNCU_SPLIT=2)


@pytest.mark.parametrize(("old", "new", "why"), [
    ("acc += x[(long long)r * C + c];", "{ acc += x[(long long)r * C + c]; s[r] = acc; }",
     "stores to memory"),
    ("acc += x[(long long)r * C + c];", "{ if (x[r] > 9.0f) break; acc += x[r]; }",
     "breaks out early"),
    ("acc += x[(long long)r * C + c];", "acc = acc * 0.5f + x[r];", "other than by one sum"),
    ("acc += x[(long long)r * C + c];", "{ acc += x[r]; s[0] += acc > 1.0f; }", "stores"),
    ("acc += x[(long long)r * C + c];", "acc += x[r] * acc;", "other than by one sum"),
    ("acc += x[(long long)r * C + c];", "{ float t = acc; acc += x[r] + t; }",
     "beyond accumulating"),
    ("float acc = 0.0f;", "float acc = 1.0f;", "does not start at a literal 0"),
    ("float acc = 0.0f;", "float acc = x[c];", "does not start at a literal 0"),
    ("float acc = 0.0f;", "float acc = 0.0f;\n    acc = x[c];", "changes before the loop"),
    ("    if (c >= C) return;\n    float acc = 0.0f;\n",
     "    float acc = 0.0f;\n    acc += x[0];\n    if (c >= C) return;\n",
     "changes before the loop"),
    ("    s[c] = acc;", "    s[c] = acc + x[threadIdx.x];", "threadIdx.x outside"),
    ("    s[c] = acc;", "    __syncthreads();\n    s[c] = acc;", "synchronizes"),
    ("    s[c] = acc;", "    for (int r = 0; r < 2; ++r) acc += 1.0f;\n    s[c] = acc;",
     "not one loop"),
    ("for (int r = 0; r < R; ++r)", "for (int r = 0; r != R; ++r)", DEALT),
    ("for (int r = 0; r < R; ++r)", "for (int r = R - 1; r < R; --r)", DEALT),
    ("for (int r = 0; r < R; ++r)", "for (int r = 0; r < R; r *= 2)", DEALT),
    ("for (int r = 0; r < R; ++r)", "for (int r = 0, k = 0; k < R; ++r)",
     DEALT),
    ("    float acc = 0.0f;", "    float acc = 0.0f;\n    const float b = x[c];",
     "uses b"),
    ("    float acc = 0.0f;", "    __shared__ float t[32];\n    float acc = 0.0f;",
     "shared memory of its own"),
    ("    if (c >= C) return;\n", "", "not checked by an `if`"),
    ("    float acc = 0.0f;", "    double pncu_q = 0.0;\n    float acc = 0.0f;", "pncu_"),
])
def test_split_refuses_what_it_cannot_deal_out(tmp_path: Path, old: str, new: str,
                                               why: str) -> None:
    source = COLSUM.replace(old, new)
    if why == "uses b":
        source = source.replace("s[c] = acc;", "s[c] = acc + b;")
    assert source != COLSUM
    assert why in refused("split_reduction", colsum(tmp_path, source))


def test_split_carries_past_the_loop_what_needs_nothing_of_the_element(tmp_path: Path) -> None:
    """A bound computed before the loop from the scalars (`n = R - 1`) and used after it is
    declared before the guard with the sums; one computed from the element is not carried."""
    source = COLSUM.replace("    float acc = 0.0f;\n",
                            "    const int n = R - 1;\n    const float inv = 1.0f / n;\n"
                            "    float acc = 0.0f;\n").replace(
        "r < R;", "r < n;").replace("s[c] = acc;", "s[c] = acc * inv;")
    spec = colsum(tmp_path, source)
    on = rendered(spec, [applied("split_reduction", spec)], PNCU_SPLIT=2)
    assert "    const int n = R - 1;\n    const float inv = 1.0f / n;\n    float acc = 0.0f;\n" \
           "    if ((c < C) && pncu_part < 2) {\n        for (int r = 0 + pncu_part; r < n;" in on
    assert on.count("const int n = R - 1;") == 1
    element = source.replace("const float inv = 1.0f / n;", "const float inv = 1.0f / (n + c);")
    assert "uses inv" in refused("split_reduction", colsum(tmp_path, element))
    mixed = source.replace("    float acc = 0.0f;\n", "    float acc = 0.0f, first = x[c];\n")
    assert "first is declared beside an accumulator" in refused("split_reduction",
                                                                colsum(tmp_path, mixed))


def test_split_reads_a_sum_declared_before_the_guard(tmp_path: Path) -> None:
    source = COLSUM.replace("    if (c >= C) return;\n    float acc = 0.0f;\n",
                            "    float acc = 0.0f;\n    if (c >= C) return;\n")
    on = split_at(tmp_path, source, 2)
    assert on.count("float acc = 0.0f;") == 1
    assert "    float acc = 0.0f;\n    if ((c < C) && pncu_part < 2) {\n" in on


def test_split_reads_a_loop_counting_down(tmp_path: Path) -> None:
    source = COLSUM.replace("for (int r = 0; r < R; ++r)", "for (int r = R - 1; r >= 0; --r)")
    on = split_at(tmp_path, source, 4)
    assert "for (int r = (R - 1) - pncu_part; r >= 0; r -= 4)" in on


POINTER_WHILE = """extern "C" __global__ void k(const float* x, float* s, int R, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) {
        const float* p = x + c;
        const float* end = x + (size_t)R * C;
        float acc = 0.0f;
        while (p < end) {
            acc += *p;
            p += C;
        }
        s[c] = acc;
    }
}
"""


def test_split_reads_a_while_loop_that_steps_a_pointer(tmp_path: Path) -> None:
    """A variable that starts before the loop is moved on `part` steps right above it."""
    spec = colsum(tmp_path, POINTER_WHILE)
    moves = [applied("split_reduction", spec)]
    on = rendered(spec, moves, PNCU_SPLIT=4)
    assert "        const float* end = x + (size_t)R * C;\n" \
           "        p += pncu_part * (C);\n        while (p < end) {\n" \
           "            acc += *p;\n            p += (C) * 4;\n        }\n    }\n" in on
    assert rendered(spec, moves) == POINTER_WHILE
    cont = POINTER_WHILE.replace("acc += *p;", "if (*p < 0.0f) { p += C; continue; }\n"
                                              "            acc += *p;")
    assert "continues past its step" in refused("split_reduction", colsum(tmp_path, cont))
    varying = POINTER_WHILE.replace("acc += *p;\n            p += C;",
                                    "int w = (int)*p;\n            acc += *p;\n            p += w;")
    assert "steps by what the loop changes" in refused("split_reduction",
                                                       colsum(tmp_path, varying))
    after = POINTER_WHILE.replace("s[c] = acc;", "s[c] = acc + *(p - C);")
    assert "which the loop steps" in refused("split_reduction", colsum(tmp_path, after))


def test_split_steps_every_variable_a_for_loop_steps(tmp_path: Path) -> None:
    """`p` starts before the loop: moved on right above it, and the unroll pragma, inserted at
    the same place, stays next to the loop. Two counters started in the header both move."""
    source = POINTER_WHILE.replace(
        "        while (p < end) {\n            acc += *p;\n            p += C;\n        }\n",
        "        for (int r = 0; r < R; ++r, p += C) acc += *p;\n")
    spec = colsum(tmp_path, source)
    moves = [applied("split_reduction", spec), applied("unroll", spec)]
    on = rendered(spec, moves, PNCU_SPLIT=2, PNCU_UNROLL=4)
    assert "        p += pncu_part * (C);\n        #pragma unroll 4\n" \
           "        for (int r = 0 + pncu_part; r < R; r += 2, p += (C) * 2) acc += *p;" in on
    assert rendered(spec, moves) == source
    two = COLSUM.replace("for (int r = 0; r < R; ++r)", "for (int r = 0, k = 1; r < R; ++r, ++k)")
    on = split_at(tmp_path, two, 2)
    assert "for (int r = 0 + pncu_part, k = 1 + pncu_part; r < R; r += 2, k += 2)" in on


def test_split_keeps_the_loop_start_whole(tmp_path: Path) -> None:
    source = COLSUM.replace("int r = 0;", "int r = R > 8 ? 1 : 0;")
    on = split_at(tmp_path, source, 2)
    assert "for (int r = (R > 8 ? 1 : 0) + pncu_part; r < R; r += 2)" in on


def test_split_deals_a_small_block_out_no_finer_than_a_thread_a_part(tmp_path: Path) -> None:
    assert applied("split_reduction", colsum(tmp_path, block=("4",))).knobs[0].values == \
        (1, 2, 4)
    assert "no room" in refused("split_reduction", colsum(tmp_path, block=("1",)))


# a column sum of each of B batches: the batch is the grid's y, the block one-dimensional
BATCHED = """extern "C" __global__ void k(const float* x, float* s, int R, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y;
    if (c >= C) return;
    const float* xb = x + (long long)b * R * C;
    float acc = 0.0f;
    for (int r = 0; r < R; ++r) acc += xb[(long long)r * C + c];
    s[b * C + c] = acc;
}
"""
BATCHED_ARGS = [{**a, "shape": ["B", *a["shape"]]} if a["name"] in ("x", "s") else a
                for a in COLSUM_ARGS]


def test_split_keeps_the_batch_dimension_of_the_grid(tmp_path: Path) -> None:
    shapes = [{**s, "B": 3} for s in COLSUM_SHAPES]
    spec = spec_of(tmp_path, BATCHED, args=BATCHED_ARGS, grid=("ceil_div(C, 256)", "B"),
                   shapes=shapes)
    a = applied("split_reduction", spec)
    assert a.grid == ("ceil_div((ceil_div(C, 256)) * (256), (256) // PNCU_SPLIT)", "B")
    from tests.fakes import cuda_on_cpu
    if cuda_on_cpu.compiler() is not None:
        launch = variant(spec, [a]).overlay["launch"]
        for split in (4, 32):
            cuda_on_cpu.equivalent(spec, rendered(spec, [a], PNCU_SPLIT=split), launch,
                                   {"PNCU_SPLIT": split}, {"B": 3, "R": 45, "C": 301}, tmp_path)


def test_split_refuses_a_two_dimensional_block_and_a_grid_flattened_over_two(
        tmp_path: Path) -> None:
    spec = colsum(tmp_path, block=("128", "2"))
    assert "the block is not one-dimensional" in refused("split_reduction", spec)
    flat = COLSUM.replace("const int c = blockIdx.x * blockDim.x + threadIdx.x;",
                          "const int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "    const int w = blockIdx.y * gridDim.x + blockIdx.x;")
    flat = flat.replace("s[c] = acc;", "s[c] = acc + w;")
    assert "meets the x dimension" in refused(
        "split_reduction", colsum(tmp_path, flat, grid=("ceil_div(C, 256)", "2")))


def test_split_leaves_a_kernel_without_an_accumulating_loop_alone(tmp_path: Path) -> None:
    copy = COLSUM.replace("acc += x[(long long)r * C + c];", "s[(long long)r * C + c] = 0.0f;")
    assert "stores to memory" in refused("split_reduction", colsum(tmp_path, copy))


# a column walk in a while loop stepping its offset and its count in two statements
WALK = """extern "C" __global__ void k(const float* x, float* s, int R, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float m = 0.0f;
    long long off = c;
    int r = 0;
    while (r < R) {
        float a = fabsf(x[off]);
        m = a > m ? a : m;
        off += C;
        r++;
    }
    s[c] = m;
}
"""


def test_split_reads_a_while_loop_stepping_two_variables_in_two_statements(
        tmp_path: Path) -> None:
    spec = colsum(tmp_path, WALK)
    a = applied("split_reduction", spec)
    four = rendered(spec, [a], PNCU_SPLIT=4)
    assert "off += pncu_part * (C);" in four and "r += pncu_part;" in four
    assert "off += (C) * 4;" in four and "r += 4;" in four
    from tests.fakes import cuda_on_cpu
    if cuda_on_cpu.compiler() is not None:
        launch = variant(spec, [a]).overlay["launch"]
        cuda_on_cpu.equivalent(spec, four, launch, {"PNCU_SPLIT": 4}, {"R": 45, "C": 301},
                               tmp_path)
