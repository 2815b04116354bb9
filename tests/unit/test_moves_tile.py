"""smem_tile: a load that a 2-D kernel reads across the grain of its stores, staged through a
TILE x TILE shared-memory tile. The rewrite on snippets (a plain transpose, one with a scale and
a bias, a permute of a 2-D slice of a batch, the reverse direction, several tiles), its default
giving back the source, every refusal, its launch at every shape, its composition with the
other moves in one round and with smem_pad in the next, and every rewrite run thread by thread
on the CPU against the source at odd shapes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pragma_ncu.backends import diagnose_in
from pragma_ncu.coder.moves import Applied, by_name
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant, variant_spec
from pragma_ncu.conductor.rules import called_moves
from pragma_ncu.conductor.situation import Situation
from pragma_ncu.loop.moves import options_of
from pragma_ncu.measure.records import KernelState
from pragma_ncu.spec import expr
from pragma_ncu.spec.file import load_spec, spec_tables
from pragma_ncu.spec.model import TaskSpec
from tests.corpus_eval import collection, knowledge
from tests.fakes import cuda_on_cpu
from tests.fakes.moves import applied, base_of, refused, rendered, subject, variant
from tests.fakes.tuner import H200_LIMITS
from tests.move_kernels.tile import (
    AFFINE,
    ARGS,
    BLOCK,
    DEREF,
    PERMUTE,
    TRANSPOSE,
    TWO,
    affine,
    deref,
    half,
    permute,
    reverse,
    transpose,
    two,
)

TRANSPOSE_32 = """extern "C" __global__ void k(const float* in, float* out, int M, int N)
{
    __shared__ float pncu_tile[32][32];  // in[y * N + x] at [y % 32][x % 32]
    {  // loaded with adjacent threads at adjacent x (coalesced)
        int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        if (x < N && y < M) {
            pncu_tile[threadIdx.y][threadIdx.x] = in[y * N + x];
        }
    }
    __syncthreads();  // every thread reaches it: the tiles are complete
    // the kernel as written, adjacent threads at adjacent y; the staged loads from the tiles
    int x = blockIdx.x * blockDim.x + threadIdx.y;
    int y = blockIdx.y * blockDim.y + threadIdx.x;
    if (x < N && y < M) {
        out[x * M + y] = pncu_tile[threadIdx.x][threadIdx.y];
    }
}
"""

AFFINE_16 = """extern "C" __global__ void k(const float* __restrict__ src, float* __restrict__ dst,
                             const float* bias, float alpha, int rows, int cols)
{
    __shared__ float pncu_tile[16][16];  // src[(size_t)row * cols + col] at [row % 16][col % 16]
    {  // loaded with adjacent threads at adjacent col (coalesced)
        const int col = blockIdx.x * blockDim.x + threadIdx.x;
        const int row = threadIdx.y + blockIdx.y * blockDim.y;
        if (!(col >= cols || row >= rows)) {
            pncu_tile[threadIdx.y][threadIdx.x] = src[(size_t)row * cols + col];
        }
    }
    __syncthreads();  // every thread reaches it: the tiles are complete
    // the kernel as written, adjacent threads at adjacent row; the staged loads from the tiles
    const int col = blockIdx.x * blockDim.x + threadIdx.y;
    const int row = threadIdx.x + blockIdx.y * blockDim.y;
    if (col >= cols || row >= rows) return;
    const float v = pncu_tile[threadIdx.x][threadIdx.y];
    dst[(size_t)col * rows + row] = alpha * v + bias[col];
}
"""


needs_cxx = pytest.mark.skipif(cuda_on_cpu.compiler() is None, reason="no C++ compiler")


# --- the rewrite -----------------------------------------------------------------------------

def test_a_transpose_loads_a_tile_coalesced_and_writes_it_transposed(tmp_path: Path) -> None:
    spec = transpose(tmp_path)
    a = applied("smem_tile", spec)
    (knob,) = a.knobs
    assert (knob.name, knob.values, knob.default) == ("PNCU_TILE", (0, 16, 32), 0)
    assert a.block == ("PNCU_TILE if PNCU_TILE else 16",) * 2
    assert a.grid == ("ceil_div(N, PNCU_TILE if PNCU_TILE else 16)",
                      "ceil_div(M, PNCU_TILE if PNCU_TILE else 16)")
    assert a.sites == ("in[y * N + x] (along x) staged through TILE x TILE shared tiles for "
                       "out[x * M + y] (along y): block -> (TILE, TILE), grid -> "
                       "ceil_div(N, TILE), ceil_div(M, TILE)",)
    assert rendered(spec, [a], PNCU_TILE=32) == TRANSPOSE_32
    assert rendered(spec, [a], PNCU_TILE=16) == TRANSPOSE_32.replace("32", "16")
    assert rendered(spec, [a]) == TRANSPOSE


def test_an_early_return_becomes_the_load_phases_predicate(tmp_path: Path) -> None:
    spec = affine(tmp_path)
    a = applied("smem_tile", spec)
    assert rendered(spec, [a], PNCU_TILE=16) == AFFINE_16
    assert rendered(spec, [a]) == AFFINE
    assert a.grid == ("ceil_div(C, PNCU_TILE if PNCU_TILE else 32)",
                      "ceil_div(R, PNCU_TILE if PNCU_TILE else 8)")
    assert "bias[col]" not in a.sites[0]  # a row vector is read as written


def test_a_permute_of_a_batchs_slice_repeats_what_its_load_needs(tmp_path: Path) -> None:
    spec = permute(tmp_path)
    a = applied("smem_tile", spec)
    assert a.grid == ("ceil_div(HW, PNCU_TILE if PNCU_TILE else 16)",
                      "ceil_div(C, PNCU_TILE if PNCU_TILE else 16)", "B")
    assert a.block == ("PNCU_TILE if PNCU_TILE else 16",) * 2 + ("1",)
    text = rendered(spec, [a], PNCU_TILE=32)
    load, write = text.split("__syncthreads();")
    assert load.startswith(PERMUTE.split("    const int hw")[0])  # the batch index stays above
    assert ("        const int c = blockIdx.y * blockDim.y + threadIdx.y;\n"
            "        const size_t image = (size_t)n * C * HW;\n"
            "        if (!(hw >= HW || c >= C)) {\n"
            "            const float* plane = in + image;\n"
            "            pncu_tile[threadIdx.y][threadIdx.x] = plane[(size_t)c * HW + hw];\n"
            "        }\n") in load
    assert write.endswith("    const int hw = blockIdx.x * blockDim.x + threadIdx.y;\n"
                          "    const int c = blockIdx.y * blockDim.y + threadIdx.x;\n"
                          "    const size_t image = (size_t)n * C * HW;\n"
                          "    if (hw >= HW || c >= C) return;\n"
                          "    const float* plane = in + image;\n"
                          "    out[image + (size_t)hw * C + c] = "
                          "pncu_tile[threadIdx.x][threadIdx.y];\n}\n")
    assert rendered(spec, [a]) == PERMUTE


def test_a_load_across_the_rows_is_staged_by_the_transposed_threads(tmp_path: Path) -> None:
    spec = reverse(tmp_path)
    a = applied("smem_tile", spec)
    text = rendered(spec, [a], PNCU_TILE=16)
    load, write = text.split("__syncthreads();")
    assert "__shared__ double pncu_tile[16][16];  // __ldg(&a[i * M + j]) at [j % 16][i % 16]" \
        in load
    assert ("        int i = blockIdx.x * blockDim.x + threadIdx.y;\n"
            "        int j = blockIdx.y * blockDim.y + threadIdx.x;\n"
            "        if (i < N && j < M) {\n"
            "            pncu_tile[threadIdx.x][threadIdx.y] = __ldg(&a[i * M + j]);\n") in load
    assert write.endswith("    int i = blockIdx.x * blockDim.x + threadIdx.x;  // column of b\n"
                          "    int j = blockIdx.y * blockDim.y + threadIdx.y;  // row of b\n"
                          "    if (i < N && j < M)\n"
                          "        b[j * N + i] = pncu_tile[threadIdx.y][threadIdx.x] * 2.0;\n"
                          "}\n")  # the write phase is the kernel as written


def test_each_load_across_the_grain_gets_a_tile_of_its_own(tmp_path: Path) -> None:
    spec = two(tmp_path)
    a = applied("smem_tile", spec)
    assert a.sites[0].startswith("a[across], brow[x] (along x)")
    text = rendered(spec, [a], PNCU_TILE=32)
    load, write = text.split("__syncthreads();")
    assert "__shared__ float pncu_tile0[32][32];" in load and \
        "__shared__ float pncu_tile1[32][32];" in load
    assert ("        if (!(x >= N) && !(y >= M)) {\n"
            "            const int across = y * N + x;\n"
            "            const float* brow = b + (size_t)y * N;\n"
            "            pncu_tile0[threadIdx.y][threadIdx.x] = a[across];\n"
            "            pncu_tile1[threadIdx.y][threadIdx.x] = brow[x];\n") in load
    assert ("    out[x * M + y] = pncu_tile0[threadIdx.x][threadIdx.y] - "
            "pncu_tile1[threadIdx.x][threadIdx.y] * c[x * M + y] + w[y];\n") in write
    assert rendered(spec, [a]) == TWO


def test_an_address_written_as_pointer_arithmetic_is_read_alike(tmp_path: Path) -> None:
    spec = deref(tmp_path)
    a = applied("smem_tile", spec)
    assert a.sites[0].startswith("*(row + x) (along x) staged through TILE x TILE shared tiles "
                                 "for *(out + x * M + y) (along y)")
    text = rendered(spec, [a], PNCU_TILE=16)
    assert ("            const float* row = in + y * N;\n"
            "            pncu_tile[threadIdx.y][threadIdx.x] = *(row + x);\n") in text
    assert "*(out + x * M + y) = 0.5f * pncu_tile[threadIdx.x][threadIdx.y];" in text
    assert rendered(spec, [a]) == DEREF


def test_the_tiles_have_the_element_type_and_fit_in_shared_memory(tmp_path: Path) -> None:
    a = applied("smem_tile", half(tmp_path))
    assert "__shared__ __half pncu_tile[32][32];" in rendered(half(tmp_path), [a], PNCU_TILE=32)
    wide = TRANSPOSE.replace("float", "float4").replace(
        "in[y * N + x];", "in[y * N + x] + in[y * N + x + 1] + in[y * N + x + 2];")
    args = [{**x, "dtype": "fp32"} for x in ARGS]
    (knob,) = applied("smem_tile", transpose(tmp_path, wide, args=args)).knobs
    assert knob.values == (0, 16)  # three tiles of 32 x 34 float4 pass 48 KB


# --- the launch ------------------------------------------------------------------------------

@pytest.mark.parametrize("tile", [0, 16, 32])
def test_the_grid_covers_the_extents_at_every_shape(tmp_path: Path, tile: int) -> None:
    spec = affine(tmp_path)
    launch = variant(spec, [applied("smem_tile", spec)]).overlay["launch"]
    for rows, cols in ((1, 1), (37, 45), (8192, 4096), (1001, 999), (33, 8)):
        env = {"R": rows, "C": cols, "PNCU_TILE": tile}
        grid = [expr.evaluate_int(g, env, "grid") for g in launch["grid"]]
        block = [expr.evaluate_int(b, env, "block") for b in launch["block"]]
        if tile == 0:  # the launch as written
            assert grid == [math.ceil(cols / 32), math.ceil(rows / 8)] and block == [32, 8]
            continue
        assert block == [tile, tile]
        for blocks, extent in zip(grid, (cols, rows), strict=True):
            assert blocks * tile >= extent and (blocks - 1) * tile < extent


def test_a_block_of_declared_parameters_is_held_while_the_tile_replaces_it(
        tmp_path: Path) -> None:
    params = {"BX": {"default": 32, "values": [16, 32]}, "BY": {"default": 8, "values": [4, 8]}}
    spec = transpose(tmp_path, grid=("ceil_div(N, BX)", "ceil_div(M, BY)"), block=("BX", "BY"),
                     params=params)
    a = applied("smem_tile", spec)
    assert a.fixed == ("BX", "BY")
    assert a.block == ("PNCU_TILE if PNCU_TILE else BX", "PNCU_TILE if PNCU_TILE else BY")
    named = TRANSPOSE.replace("in[y * N + x];", "in[y * N + x] * BX;")
    assert "names BX, which the block is written with" in refused(
        "smem_tile", transpose(tmp_path, named, grid=("ceil_div(N, BX)", "ceil_div(M, BY)"),
                               block=("BX", "BY"), params=params))


# --- what it refuses -------------------------------------------------------------------------

@pytest.mark.parametrize(("old", "new", "why"), [
    ("        out[x * M + y] = in[y * N + x];\n",
     "        for (int r = 0; r < 2; ++r) out[x * M + y] = in[y * N + x];\n", "the kernel loops"),
    ("    if (x < N", "    __syncthreads();\n    if (x < N", "synchronizes"),
    ("{\n    int x", "{\n    __shared__ float s[4];\n    s[0] = 0.0f;\n    int x",
     "shared memory of its own"),
    ("in[y * N + x];", "in[y * N + x] + threadIdx.x;", "reads threadIdx.x outside"),
    ("{\n    int x", "{\n    if (N == 0) return;\n    int x", "returns before its guard"),
    ("in[y * N + x];", "in[2 * (y * N + x)];", "unit-stride neither in x nor in y"),
    ("in[y * N + x];", "M > 4 ? in[y * N + x] : 0.0f;", "is read under a condition"),
    ("in[y * N + x];", "*(&in[y * N + x]);", "takes the address of in[y * N + x]"),
    ("out[x * M + y] = in[y * N + x];", "out[y * N + x] = in[y * N + x];",
     "no load is transposed against the stores"),
    ("in[y * N + x];", "in[y * N + x];\n        x++;", "x changes after its declaration"),
    ("if (x < N && y < M)", "if (x < N)", "does not bound both x and y"),
    ("    int y = blockIdx.y * blockDim.y + threadIdx.y;\n",
     "    int y = blockIdx.y * 16 + threadIdx.y;\n", "no pair of global indices"),
    ("    if (x < N", "    float v = in[y * N + x];\n    if (x < N", "accessed in or before"),
    ("in[y * N + x];", "in[y * N + x] + in[y * N + x + 1] + in[y * N + x + 2] + "
     "in[y * N + x + 3] + in[y * N + x + 4];", "5 loads to stage (at most 4 tiles)"),
    ("out[x * M + y] = in[y * N + x];", "out[x * M + y] = in[y * N + x];\n"
     "        out[y * N + x] = 0.0f;", "is written along x and out[x * M + y] along y"),
])
def test_smem_tile_refuses_what_it_cannot_stage(tmp_path: Path, old: str, new: str,
                                                why: str) -> None:
    assert old in TRANSPOSE
    assert why in refused("smem_tile", transpose(tmp_path, TRANSPOSE.replace(old, new)))


def test_a_load_read_for_every_element_may_be_read_again_under_a_condition(
        tmp_path: Path) -> None:
    again = TRANSPOSE.replace("in[y * N + x];", "in[y * N + x];\n        out[x * M + y] += "
                              "M > 4 ? in[y * N + x] : 0.0f;")
    a = applied("smem_tile", spec := transpose(tmp_path, again))
    assert a.sites[0].startswith("in[y * N + x] (along x) staged through TILE x TILE shared "
                                 "tiles for out[x * M + y] (along y)")
    assert rendered(spec, [a], PNCU_TILE=16).count("pncu_tile[threadIdx.x][threadIdx.y]") == 2


def test_smem_tile_refuses_a_load_it_would_move_before_a_store_or_a_return(
        tmp_path: Path) -> None:
    stored = TRANSPOSE.replace("const float* in", "float* in").replace(
        "in[y * N + x];", "in[y * N + x];\n        in[x * M + y] = 0.0f;")
    assert "stores to in, which in[y * N + x] (line 6) reads" in refused(
        "smem_tile", transpose(tmp_path, stored))
    changed = TRANSPOSE.replace("        out[x * M + y]",
                                "        M = M + 0;\n        out[x * M + y]")
    assert "M, which the guard or a staged load reads, is not a value" in refused(
        "smem_tile", transpose(tmp_path, changed))
    early = AFFINE.replace("    const float v", "    const float s = alpha * alpha;\n"
                           "    if (s == 0.0f) return;\n    const float v")
    assert "may return (line 8) before it reads" in refused("smem_tile", affine(tmp_path, early))
    # returns right after the guard are the guard's: the load phase takes them as its predicate
    more = AFFINE.replace("    const float v", "    if (alpha == 0.0f) return;\n    const float v")
    assert "if (!(col >= cols || row >= rows) && !(alpha == 0.0f)) {" in rendered(
        affine(tmp_path, more), [applied("smem_tile", affine(tmp_path, more))], PNCU_TILE=16)


@pytest.mark.parametrize(("grid", "block", "why"), [
    (("ceil_div(N * M, 256)",), ("256",), "the block is one-dimensional"),
    (("ceil_div(N, 16)", "ceil_div(M, 16)"), ("256",), "the block is one-dimensional"),
    (("(N + 15) // 16", "ceil_div(M, 16)"), BLOCK, "x dimension ((N + 15) // 16) is not"),
    (("ceil_div(N, 16)", "ceil_div(M, 32)"), BLOCK, "not written as ceil_div(extent, 16)"),
    (("ceil_div(N, 16)", "ceil_div(M, 16)", "2"), ("16", "16", "2"), "third dimension"),
])
def test_smem_tile_refuses_a_launch_it_cannot_tile(tmp_path: Path, grid: tuple[str, ...],
                                                  block: tuple[str, ...], why: str) -> None:
    assert why in refused("smem_tile", transpose(tmp_path, grid=grid, block=block))


# --- composition -----------------------------------------------------------------------------

def test_smem_tile_composes_with_readonly_and_cache_policy_and_not_launch_bounds(
        tmp_path: Path) -> None:
    twice = AFFINE.replace(" __restrict__", "").replace(
        "= alpha * v + bias[col];", "= alpha * v;\n    dst[(size_t)col * rows + row] += bias[col];")
    spec = affine(tmp_path, twice)  # bias is read after a store: readonly fits
    moves = [applied(m, spec) for m in ("smem_tile", "readonly", "cache_policy")]
    built = variant(spec, moves)
    text = asm.instance(built, {"PNCU_TILE": 32, "PNCU_READONLY": 1})
    assert "const float* __restrict__ bias" in text and "pncu_tile[32][32]" in text
    bounds = applied("launch_bounds", spec, registers=128)
    _, kept, clashed = asm.assemble(base_of(spec), [applied("smem_tile", spec), bounds], "m", "")
    assert [a.move for a in kept] == ["smem_tile"]
    assert "cannot both hold" in clashed[0].reason


def test_the_uncoalesced_finding_calls_for_smem_tile(tmp_path: Path) -> None:
    """The recorded profile of the naive transpose (its top finding: uncoalesced accesses,
    62% of the time) with the moves read against a 2-D transpose: smem_tile comes first."""
    profile, kernel = collection("ours")["transpose"]
    diagnosis = diagnose_in(profile, kernel, knowledge())
    assert diagnosis.findings[0].bottleneck == "uncoalesced_access"
    best = KernelState(0, "original", "k", "h", {}, {"main": 100.0}, {"main": 1.0}, 100.0, True,
                       ceiling_fraction=0.3)
    s = Situation(0, best, None, None, False, "", None, diagnosis, (),
                  moves=options_of(subject(transpose(tmp_path))))
    assert [c.move for c in called_moves(s)][:1] == ["smem_tile"]
    assert called_moves(s)[0].finding == "uncoalesced_access"


def _next_round(spec: TaskSpec, a: Applied, tile: int, tmp: Path) -> tuple[TaskSpec, asm.Base]:
    """The spec of the moves variant and its best at `tile`, as the next round reads them."""
    built = variant(spec, [a])
    vspec = variant_spec(spec_tables(spec), built, spec.spec_path, tmp / "variants")
    return vspec, asm.base_of(built, vspec, {"PNCU_TILE": tile})


@needs_cxx
@pytest.mark.parametrize("tile", [16, 32])
def test_smem_pad_pads_the_tile_in_the_next_round(tmp_path: Path, tile: int) -> None:
    spec = affine(tmp_path)
    vspec, base = _next_round(spec, applied("smem_tile", spec), tile, tmp_path)
    assert base.launch["block"] == [str(tile), str(tile)]  # baked: the knob's value
    found = asm.subject_of(base, vspec, {"PNCU_TILE": tile}, (), 32, H200_LIMITS)
    assert not isinstance(found, str), found
    pad = by_name("smem_pad").apply(found)
    assert isinstance(pad, Applied), pad
    assert pad.sites == (f"pncu_tile[{tile}][{tile}] (line 4)",)
    again = by_name("smem_tile").apply(found)
    assert not isinstance(again, Applied) and "shared memory of its own" in again.reason, again
    built, kept, _ = asm.assemble(base, [pad], "moves 2", "")
    assert kept == [pad]
    padded = asm.instance(built, {"PNCU_SMEM_PAD": 1})
    assert f"__shared__ float pncu_tile[{tile}][{tile} + 1];" in padded
    cuda_on_cpu.equivalent(spec, padded, built.overlay["launch"], {}, {"R": 37, "C": 45},
                           tmp_path)


# --- the rewrite run on the CPU --------------------------------------------------------------

@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the module's CPU builds: each source is compiled once."""
    return tmp_path_factory.mktemp("emulated")


ODD = {  # sizes that are no multiple of a tile, a block, or a warp
    "transpose": (transpose, [{"M": 37, "N": 45}, {"M": 45, "N": 37}, {"M": 1, "N": 70}]),
    "affine": (affine, [{"R": 37, "C": 45}, {"R": 33, "C": 1}]),
    "permute": (permute, [{"B": 2, "C": 19, "HW": 50}, {"B": 1, "C": 40, "HW": 7}]),
    "reverse": (reverse, [{"M": 37, "N": 45}]),
    "two": (two, [{"M": 37, "N": 45}, {"M": 17, "N": 33}]),
    "half": (half, [{"M": 37, "N": 45}]),
    "deref": (deref, [{"M": 37, "N": 45}]),
}


@needs_cxx
@pytest.mark.parametrize("tile", [16, 32])
@pytest.mark.parametrize("name", sorted(ODD))
def test_the_rewrite_computes_what_the_source_does_at_odd_shapes(
        name: str, tile: int, tmp_path: Path, emulated: Path) -> None:
    make, shapes = ODD[name]
    spec = make(tmp_path)
    a = applied("smem_tile", spec)
    text = rendered(spec, [a], PNCU_TILE=tile)
    launch = variant(spec, [a]).overlay["launch"]
    for dims in shapes:
        cuda_on_cpu.equivalent(spec, text, launch, {"PNCU_TILE": tile}, dims, emulated)


EXTRA = Path(__file__).resolve().parents[2] / "examples" / "moves" / "structural" / "extra"
SMALL = {  # each extra kernel at a shape the emulator runs in a moment, odd in every extent
    "transpose_affine": {"R": 37, "C": 45},
    "nchw_to_nhwc_half": {"B": 2, "C": 19, "HW": 50},
    "add_transposed": {"M": 37, "N": 45},
    "grad_transpose_accum": {"M": 37, "N": 45},  # kept aside while the move was written
    "transpose_u8_pitched": {"H": 37, "W": 45, "PI": 47, "PO": 40},  # kept aside too
}


@needs_cxx
@pytest.mark.parametrize("name", sorted(SMALL))
def test_the_extra_kernels_rewrites_compute_what_they_and_their_references_do(
        name: str, emulated: Path) -> None:
    spec = load_spec(EXTRA / f"{name}.toml")
    base = asm.base_of(original_variant(spec), spec, {})
    found = asm.subject_of(base, spec, {}, (), 32, H200_LIMITS)
    assert not isinstance(found, str), found
    a = by_name("smem_tile").apply(found)
    assert isinstance(a, Applied), a
    built, _, _ = asm.assemble(base, [a], "moves 1", "")
    for tile in a.knobs[0].values[1:]:
        cuda_on_cpu.equivalent(spec, asm.instance(built, {"PNCU_TILE": tile}),
                               built.overlay["launch"], {"PNCU_TILE": tile}, SMALL[name],
                               emulated, reference=True)
