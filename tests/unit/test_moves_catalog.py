"""Each source move on small kernels: it applies where its reason holds, leaves alone what it
must, refuses what it cannot handle, and its knobs' defaults give back the source."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu.coder.moves import MOVES, by_name
from pragma_ncu.coder.moves import assemble as asm
from tests.fakes.moves import applied, refused, rendered, spec_of, subject

LOOP = """extern "C" __global__ void k(float* y, const float* x, int n, int R)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int r = 0; r < R; ++r)
        acc += x[(long long)r * n + i];
    for (int j = 0; j < 8; ++j) acc *= 0.5f;
    y[i] = acc;
}
"""
LOOP_ARGS = [{"name": "y", "dtype": "fp32", "shape": ["n"], "role": "output"},
             {"name": "x", "dtype": "fp32", "shape": ["R", "n"], "role": "input"},
             {"name": "n", "dtype": "int32", "role": "scalar", "value": "n"},
             {"name": "R", "dtype": "int32", "role": "scalar", "value": "R"}]
SHAPES = [{"name": "main", "n": 1 << 20, "R": 64}, {"name": "odd", "n": 1001, "R": 3}]


def loop_spec(tmp: Path, source: str = LOOP, **kw: object):  # type: ignore[no-untyped-def]
    return spec_of(tmp, source, args=LOOP_ARGS, shapes=SHAPES, **kw)  # type: ignore[arg-type]


def test_the_registry_names_each_move_once_with_its_reason() -> None:
    names = [m.name for m in MOVES]
    assert len(names) == len(set(names)) >= 7
    assert {"unroll", "launch_bounds", "smem_pad", "readonly", "fast_math", "coarsen",
            "cache_policy"} <= set(names)
    for m in MOVES:
        assert m.answers and m.why and m.never and m.knobs
        assert all(k.startswith("PNCU_") for k in m.knobs)
    with pytest.raises(KeyError, match="no move named"):
        by_name("no_such_move")


# --- unroll ---------------------------------------------------------------------------------

def test_unroll_puts_the_pragma_on_the_loop_that_loads(tmp_path: Path) -> None:
    spec = loop_spec(tmp_path)
    a = applied("unroll", spec)
    assert a.sites == ("the loop at line 6 (innermost, loads through a pointer parameter)",)
    four = rendered(spec, [a], PNCU_UNROLL=4)
    assert "    #pragma unroll 4\n    for (int r = 0; r < R; ++r)" in four
    assert four.count("#pragma") == 1  # the constant-trip loop is left to the compiler
    assert rendered(spec, [a], PNCU_UNROLL=0) == LOOP


def test_unroll_follows_the_hot_lines_when_the_profile_has_them(tmp_path: Path) -> None:
    spec = loop_spec(tmp_path, LOOP.replace("j < 8", "j < R"))
    a = applied("unroll", spec, hot=(8,))
    assert [s.split(" (")[0] for s in a.sites] == ["the loop at line 8"]
    assert "hot in the profile's source counters" in a.sites[0]
    a = applied("unroll", spec, hot=(8, 7))  # both loops hold hot lines: the hottest first
    assert [s.split(" (")[0] for s in a.sites] == ["the loop at line 8", "the loop at line 6"]
    assert "no loop holds" in refused("unroll", spec, hot=(2, 3))


def test_unroll_refuses_loops_that_are_unrolled_already(tmp_path: Path) -> None:
    pragma = LOOP.replace("    for (int r", "#pragma unroll 2\n    for (int r")
    assert "unrolled already" in refused("unroll", loop_spec(tmp_path, pragma))
    constant = "#define TAPS 16\n" + LOOP.replace("r < R", "r < TAPS")
    assert "unrolled already" in refused("unroll", loop_spec(tmp_path, constant))
    flat = LOOP.replace("for (int r = 0; r < R; ++r)\n        acc += x[(long long)r * n + i];",
                        "acc += x[i];").replace("j < 8", "j < R")
    assert "no loop loads" in refused("unroll", loop_spec(tmp_path, flat))


# --- launch_bounds --------------------------------------------------------------------------

def test_launch_bounds_asks_for_the_blocks_registers_deny(tmp_path: Path) -> None:
    spec = loop_spec(tmp_path)
    a = applied("launch_bounds", spec, registers=128)  # 128 x 256 threads: 2 blocks per SM
    assert a.knobs[0].values == (0, 3, 4, 6, 8) and a.knobs[0].default == 0
    assert "void __launch_bounds__(256, 4) k(" in rendered(spec, [a], PNCU_MIN_BLOCKS=4)
    assert rendered(spec, [a]) == LOOP
    assert "do not limit occupancy" in refused("launch_bounds", spec, registers=32)
    assert "unknown" in refused("launch_bounds", spec, registers=None)
    bounded = LOOP.replace("void k(", "void __launch_bounds__(256) k(")
    assert "already" in refused("launch_bounds", loop_spec(tmp_path, bounded), registers=128)


def test_launch_bounds_follows_a_block_knob_or_holds_it(tmp_path: Path) -> None:
    knob = {"BLOCK": {"default": 256, "values": [128, 256, 512]}}
    spec = loop_spec(tmp_path, block=("BLOCK",), params=knob)
    a = applied("launch_bounds", spec, registers=128)
    assert "__launch_bounds__(BLOCK, 3)" in rendered(spec, [a], PNCU_MIN_BLOCKS=3)
    assert a.fixed == ()
    two = {"BX": {"default": 32, "values": [32, 64]}, "BY": {"default": 8, "values": [4, 8]}}
    spec = loop_spec(tmp_path, block=("BX", "BY"), params=two)
    a = applied("launch_bounds", spec, registers=128)
    assert "__launch_bounds__(256, 3)" in rendered(spec, [a], PNCU_MIN_BLOCKS=3)
    assert a.fixed == ("BX", "BY")  # the literal holds only while they do


# --- smem_pad -------------------------------------------------------------------------------

TRANSPOSE = """#define TILE 32
extern "C" __global__ void k(float* y, const float* x, int n)
{
    __shared__ float tile[TILE][TILE];
    const int tx = threadIdx.x;
    tile[threadIdx.y][tx] = x[threadIdx.y * n + tx];
    __syncthreads();
    y[threadIdx.y * n + tx] = tile[tx][threadIdx.y];
}
"""


def test_smem_pad_pads_the_tile_a_warp_reads_by_column(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, TRANSPOSE, block=("32", "8"))
    a = applied("smem_pad", spec)
    assert a.sites == ("tile[TILE][TILE] (line 4)",)
    assert "__shared__ float tile[TILE][TILE + 1];" in rendered(spec, [a], PNCU_SMEM_PAD=1)
    assert rendered(spec, [a]) == TRANSPOSE
    wide = TRANSPOSE.replace("[TILE][TILE]", "[TILE][2 * TILE]")
    a = applied("smem_pad", spec_of(tmp_path, wide, block=("32", "8")))
    assert "[TILE][(2 * TILE) + 2]" in rendered(spec_of(tmp_path, wide), [a], PNCU_SMEM_PAD=2)


@pytest.mark.parametrize(("change", "why"), [
    ("tile[tx][threadIdx.y]", "no access walks it by column"),  # read by rows only
    ("((float*)tile)[tx]", "used other than element by element"),
    ("tile[tx][0] + sizeof(tile)", "used other than element by element"),
])
def test_smem_pad_leaves_alone_what_padding_would_not_fix_or_would_break(
        tmp_path: Path, change: str, why: str) -> None:
    source = TRANSPOSE.replace("tile[tx][threadIdx.y]", change)
    if "no access" in why:
        source = TRANSPOSE.replace("tile[tx][threadIdx.y]", "tile[threadIdx.y][tx]")
    assert why in refused("smem_pad", spec_of(tmp_path, source, block=("32", "8")))


def test_smem_pad_leaves_skewed_rows_alone(tmp_path: Path) -> None:
    skewed = TRANSPOSE.replace("[TILE][TILE]", "[TILE][TILE + 1]")
    assert "skewed" in refused("smem_pad", spec_of(tmp_path, skewed, block=("32", "8")))
    assert "no __shared__" in refused("smem_pad", loop_spec(tmp_path))


# --- readonly -------------------------------------------------------------------------------

ALIASING = """extern "C" __global__ void k(float* out, float* frames, const float* w, int K, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    out[c] = 0.0f;
    for (int k = 0; k < K; ++k) out[c] += w[k] * frames[(long long)k * C + c];
}
"""
ALIASING_ARGS = [{"name": "out", "dtype": "fp32", "shape": ["C"], "role": "output"},
                 {"name": "frames", "dtype": "fp32", "shape": ["K", "C"], "role": "input"},
                 {"name": "w", "dtype": "fp32", "shape": ["K"], "role": "input"},
                 {"name": "K", "dtype": "int32", "role": "scalar", "value": "K"},
                 {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]
ALIASING_SHAPES = [{"name": "main", "K": 8, "C": 4096}]
ALIASING_GRID = ("ceil_div(C, 256)",)


def test_readonly_declares_the_inputs_read_after_stores(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, ALIASING, args=ALIASING_ARGS, shapes=ALIASING_SHAPES,
                   grid=ALIASING_GRID)
    a = applied("readonly", spec)
    on = rendered(spec, [a], PNCU_READONLY=1)
    assert "void k(float* out, const float* __restrict__ frames, const float* __restrict__ w," \
        in on
    assert rendered(spec, [a]) == ALIASING


def test_readonly_keeps_const_off_a_pointer_passed_on(tmp_path: Path) -> None:
    source = ALIASING.replace("void k(", "void f(float* p) {}\nextern \"C\" __global__ void k(")
    source = source.replace("extern \"C\" __global__ void f", "__device__ void f")
    source = source.replace("    out[c] = 0.0f;", "    out[c] = 0.0f;\n    f(frames);")
    spec = spec_of(tmp_path, source, args=ALIASING_ARGS, shapes=ALIASING_SHAPES,
                   grid=ALIASING_GRID)
    on = rendered(spec, [applied("readonly", spec)], PNCU_READONLY=1)
    assert "float * __restrict__ frames" in on.replace("float* __restrict__ frames",
                                                       "float * __restrict__ frames")
    assert "const float* __restrict__ frames" not in on


def test_readonly_refuses_where_nothing_can_alias(tmp_path: Path) -> None:
    elementwise = """extern "C" __global__ void k(float* y, const float* x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""
    assert "loads already come before the stores" in refused(
        "readonly", spec_of(tmp_path, elementwise))
    done = ALIASING.replace("float* frames, const float* w",
                            "const float* __restrict__ frames, const float* __restrict__ w")
    spec = spec_of(tmp_path, done, args=ALIASING_ARGS, shapes=ALIASING_SHAPES,
                   grid=ALIASING_GRID)
    assert "lacks const __restrict__" in refused("readonly", spec)
    args = [dict(a, role="inout") if a["name"] in ("frames", "w") else a for a in ALIASING_ARGS]
    assert "no pointer argument as an input" in refused(
        "readonly", spec_of(tmp_path, ALIASING, args=args, shapes=ALIASING_SHAPES,
                            grid=ALIASING_GRID))


# --- fast_math and cache_policy: flag knobs -------------------------------------------------

SILU = """extern "C" __global__ void k(float* y, const float* x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / (1.0f + expf(-x[i]));
}
"""


def test_fast_math_is_a_flag_knob_for_kernels_that_call_float_functions(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, SILU)
    a = applied("fast_math", spec)
    assert a.edits == () and a.knobs[0].default == ""
    assert a.sites == ("nvcc options for expf, float division",)
    knob = a.knobs[0]
    assert knob.flag is not None and knob.flag.replace("{}", "use_fast_math") == \
        "-use_fast_math"
    assert "calls no single-precision" in refused("fast_math", loop_spec(tmp_path))
    doubles = SILU.replace("float", "double").replace("expf", "exp").replace("1.0f", "1.0")
    assert "calls no single-precision" in refused("fast_math", spec_of(tmp_path, doubles))
    fast = spec_of(tmp_path, SILU, flags=("-O3", "--use_fast_math"))
    assert "fast math already" in refused("fast_math", fast)


def test_cache_policy_is_a_flag_knob_for_kernels_that_load(tmp_path: Path) -> None:
    a = applied("cache_policy", spec_of(tmp_path, SILU))
    assert a.knobs[0].values == ("", "ca", "cg") and a.knobs[0].flag == "-Xptxas -dlcm={}"
    assert "already" in refused("cache_policy", spec_of(tmp_path, SILU,
                                                        flags=("-Xptxas", "-dlcm=cg")))
    writes = SILU.replace("x[i] / (1.0f + expf(-x[i]))", "(float)i")
    assert "loads nothing" in refused("cache_policy", spec_of(tmp_path, writes))


# --- coarsen --------------------------------------------------------------------------------

SETUP = """extern "C" __global__ void k(float* y, const float* x, int n, float g)
{
    __shared__ float t[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    t[threadIdx.x] = powf(threadIdx.x / 255.0f, g);
    __syncthreads();
    if (i >= n) return;
    const float v = x[i];
    y[i] = t[(int)v & 255] * v;
}
"""
SETUP_ARGS = [*[dict(a) for a in (
    {"name": "y", "dtype": "fp32", "shape": ["n"], "role": "output"},
    {"name": "x", "dtype": "fp32", "shape": ["n"], "role": "input"},
    {"name": "n", "dtype": "int32", "role": "scalar", "value": "n"},
    {"name": "g", "dtype": "fp32", "role": "scalar", "value": 0.5})]]


def test_coarsen_turns_the_guarded_element_into_a_grid_stride_loop(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, SETUP, args=SETUP_ARGS)
    a = applied("coarsen", spec)
    assert a.grid == ("ceil_div(ceil_div(n, 256), PNCU_COARSEN)",)
    assert a.knobs[0].values == (1, 2, 4, 8, 16) and a.knobs[0].default == 1
    on = rendered(spec, [a], PNCU_COARSEN=4)
    assert "const int i =" not in on
    assert ("    __syncthreads();\n    for (int i = blockIdx.x * blockDim.x + threadIdx.x; "
            "i < n; i += (int)gridDim.x * blockDim.x) {\n        const float v = x[i];\n"
            "        y[i] = t[(int)v & 255] * v;\n    }\n}\n") in on
    assert rendered(spec, [a], PNCU_COARSEN=1) == SETUP


def test_coarsen_reads_a_guarded_block_too(tmp_path: Path) -> None:
    block = SETUP.replace("    if (i >= n) return;\n    const float v = x[i];\n"
                          "    y[i] = t[(int)v & 255] * v;\n",
                          "    if (i < n) {\n        y[i] = t[i & 255];\n    }\n")
    spec = spec_of(tmp_path, block, args=SETUP_ARGS)
    on = rendered(spec, [applied("coarsen", spec)], PNCU_COARSEN=2)
    assert "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; " \
           "i += (int)gridDim.x * blockDim.x) {\n        y[i] = t[i & 255];\n    }" in on


@pytest.mark.parametrize(("old", "new", "why"), [
    ("    const float v = x[i];", "    const float v = x[i];\n    __syncthreads();",
     "synchronizes"),
    ("    const float v = x[i];", "    const float v = x[i + blockIdx.x];", "blockIdx"),
    ("    const float v = x[i];", "    if (v0 > 1) return;\n    const float v = x[i];",
     "returns early"),
    ("    t[threadIdx.x] = powf(threadIdx.x / 255.0f, g);\n    __syncthreads();\n", "",
     "no per-thread setup"),
    ("    if (i >= n) return;\n", "", "not checked by an `if`"),
])
def test_coarsen_refuses_what_a_loop_would_change(tmp_path: Path, old: str, new: str,
                                                   why: str) -> None:
    source = SETUP.replace(old, new).replace("v0 > 1", "x[0] > 1.0f")
    assert why in refused("coarsen", spec_of(tmp_path, source, args=SETUP_ARGS))


def test_coarsen_keeps_a_batch_dimension_of_the_grid_and_refuses_a_two_dimensional_block(
        tmp_path: Path) -> None:
    batched = SETUP.replace("const float v = x[i];", "const float v = x[i] + blockIdx.y;")
    a = applied("coarsen", spec_of(tmp_path, batched, args=SETUP_ARGS,
                                   grid=("ceil_div(n, 256)", "2")))
    assert a.grid == ("ceil_div(ceil_div(n, 256), PNCU_COARSEN)", "2")
    assert "the block is not one-dimensional" in refused(
        "coarsen", spec_of(tmp_path, SETUP, args=SETUP_ARGS, block=("128", "2")))
    flat = SETUP.replace("const float v = x[i];",
                         "const float v = x[i + blockIdx.y * gridDim.x * blockDim.x];")
    assert "blockIdx.y meets the x dimension in `i + blockIdx.y * gridDim.x * blockDim.x`" in \
        refused("coarsen", spec_of(tmp_path, flat, args=SETUP_ARGS, grid=("ceil_div(n, 256)", "2")))


# --- what every move refuses ----------------------------------------------------------------

def test_no_move_reads_a_kernel_written_through_macros(tmp_path: Path) -> None:
    macro = """#define KERNEL(name) extern "C" __global__ void name
KERNEL(k)(float* y, const float* x, int n)
{
    BODY_MACRO(y, x)
    y[0] = x[0];
}
"""
    spec = spec_of(tmp_path, macro)
    got = asm.subject_of(asm.base_of(
        __import__("pragma_ncu.coder.variant", fromlist=["x"]).original_variant(spec), spec,
        {}), spec, {})
    assert isinstance(got, str) and "not one function definition" in got
    body = SILU.replace("    const int i", "    BODY_MACRO(y, x)\n    const int i")
    spec = spec_of(tmp_path, body)
    got = asm.subject_of(asm.base_of(
        __import__("pragma_ncu.coder.variant", fromlist=["x"]).original_variant(spec), spec,
        {}), spec, {})
    assert isinstance(got, str) and "does not parse" in got


def test_a_template_kernel_is_read_and_its_template_line_kept(tmp_path: Path) -> None:
    source = LOOP.replace('extern "C" __global__ void k(',
                          "template <int U>\n__global__ void k(")
    spec = loop_spec(tmp_path, source)
    a = applied("unroll", spec)
    assert rendered(spec, [a]) == source
    assert "template <int U>\n__global__ void k(" in rendered(spec, [a], PNCU_UNROLL=2)
    assert isinstance(subject(spec).kernel, object)


def test_coarsen_keeps_the_index_type_casts_and_all(tmp_path: Path) -> None:
    source = SETUP.replace("const int i = blockIdx.x * blockDim.x + threadIdx.x;",
                           "const auto i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;")
    spec = spec_of(tmp_path, source, args=SETUP_ARGS)
    on = rendered(spec, [applied("coarsen", spec)], PNCU_COARSEN=2)
    assert "for (auto i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; " \
           "i += (decltype(i))gridDim.x * blockDim.x) {" in on
