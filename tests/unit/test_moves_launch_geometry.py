"""The launch-geometry moves. block_size: the threads per block as a knob where the spec fixes
them and the kernel is written for any block size; the grid follows it; refused wherever the
code may depend on the number. grid_size: more blocks for a grid-stride kernel on a fixed grid;
refused where blocks are not interchangeable."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.moves import by_name
from pragma_ncu.conductor.rules import decide
from pragma_ncu.conductor.situation import Policy
from tests.corpus_eval import knowledge
from tests.corpus_moves import situation
from tests.fakes.moves import applied, base_of, refused, spec_of, subject, variant

ELEMENTWISE = """extern "C" __global__ void k(float* y, const float* x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""
ROWS = """extern "C" __global__ void k(float* y, const float* x, int n)
{
    for (int h = threadIdx.x; h < n; h += blockDim.x) y[blockIdx.x * n + h] = x[h];
}
"""


def test_the_block_becomes_the_knob_and_the_grid_follows_it(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, ELEMENTWISE)
    a = applied("block_size", spec)
    (knob,) = a.knobs
    assert knob.name == "PNCU_BLOCK" and knob.default == 256
    assert knob.values == (256, 64, 128, 512, 1024)
    assert a.edits == ()  # the source is not touched
    built = variant(spec, [a])
    assert asm.instance(built, {"PNCU_BLOCK": 512}) == ELEMENTWISE
    assert built.overlay["launch"]["block"] == ["PNCU_BLOCK"]
    assert built.overlay["launch"]["grid"] == ["ceil_div(n, PNCU_BLOCK)"]
    assert built.overlay["params"]["PNCU_BLOCK"]["default"] == 256


def test_a_block_per_row_keeps_its_grid_and_a_static_tile_only_shrinks(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, ROWS, grid=("n",))
    a = applied("block_size", spec)
    assert "the grid as written" in a.sites[0]
    assert variant(spec, [a]).overlay["launch"]["grid"] == ["n"]
    staged = ELEMENTWISE.replace("{\n", "{\n    __shared__ float s[64];\n    s[0] = 0.0f;\n", 1)
    (knob,) = applied("block_size", spec_of(tmp_path, staged)).knobs
    assert max(knob.values) == 256 and min(knob.values) == 64
    rows_staged = ROWS.replace("{\n", "{\n    __shared__ float s[64];\n    s[0] = 0.0f;\n", 1)
    assert "only smaller blocks" in refused("block_size",
                                            spec_of(tmp_path, rows_staged, grid=("n",)))


def test_refused_where_the_code_may_depend_on_the_number(tmp_path: Path) -> None:
    fixed = ELEMENTWISE.replace("blockIdx.x * blockDim.x", "blockIdx.x * 256")
    assert "never reads blockDim" in refused("block_size", spec_of(tmp_path, fixed))
    sized = ELEMENTWISE.replace("{\n", "{\n    __shared__ float t[256];\n    t[0] = 1.0f;\n", 1)
    assert "256 appears" in refused("block_size", spec_of(tmp_path, sized))
    named = "#define THREADS 256\n" + ELEMENTWISE
    assert "THREADS = 256" in refused("block_size", spec_of(tmp_path, named))
    bounded = ELEMENTWISE.replace('__global__ void', '__global__ void __launch_bounds__(256)')
    assert "__launch_bounds__" in refused("block_size", spec_of(tmp_path, bounded))
    a_param = spec_of(tmp_path, ELEMENTWISE, block=("B",), grid=("ceil_div(n, B)",),
                      params={"B": {"default": 256, "values": [128, 256]}})
    assert "a parameter of the spec already" in refused("block_size", a_param)
    two_d = spec_of(tmp_path, ELEMENTWISE, block=("32", "8"), grid=("n", "1"))
    assert "not one-dimensional" in refused("block_size", two_d)


def test_refused_where_another_block_would_cover_other_elements(tmp_path: Path) -> None:
    """A fixed grid (158 blocks, a tail effect) over a grid-wide index: 512 threads a block
    would cover twice the elements, 128 half of them."""
    spec = spec_of(tmp_path, ELEMENTWISE, grid=("158",), block=("1024",))
    assert "does not count threads" in refused("block_size", spec)


def test_it_composes_with_coarsen_and_clashes_with_launch_bounds(tmp_path: Path) -> None:
    setup = ELEMENTWISE.replace(
        "    if (i < n)",
        "    float scale = 0.0f;\n    for (int j = 0; j < 4; ++j) scale += x[j];\n"
        "    if (i < n)").replace("2.0f * x[i]", "scale * x[i]")
    spec = spec_of(tmp_path, setup)
    both = [applied("coarsen", spec), applied("block_size", spec)]
    grid = variant(spec, both).overlay["launch"]["grid"]
    assert grid == ["ceil_div(ceil_div(n, PNCU_BLOCK), PNCU_COARSEN)"]
    bounds = by_name("launch_bounds").apply(subject(spec, registers=128))
    assert isinstance(bounds, asm.Applied) and bounds.writes_block, bounds
    _, kept, clashed = asm.assemble(base_of(spec), [bounds, applied("block_size", spec)],
                                    "moves 1", "test")
    assert [k.move for k in kept] == ["launch_bounds"]
    assert "cannot both hold" in clashed[0].reason


def test_the_conductor_calls_for_them_on_a_recorded_small_grid() -> None:
    """copy_few_blocks (the corpus, H200): a grid-stride float4 copy on a fixed NBLK-block grid
    of 512 threads, diagnosed small_grid: both launch moves are called for, for that finding."""
    d = decide(situation("copy_few_blocks"), Policy(), knowledge())
    assert d.action == "moves", d.reason
    assert {c.move for c in d.moves} >= {"grid_size", "block_size"}
    assert {c.finding for c in d.moves if c.move in ("grid_size", "block_size")} == \
        {"small_grid"}


STRIDED = """extern "C" __global__ void k(float* y, const float* x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = 2.0f * x[i];
}
"""
NBLK_SHAPES = [{"name": "main", "n": 1 << 20, "NBLK": 16}, {"name": "odd", "n": 1001, "NBLK": 3}]


def test_grid_size_multiplies_a_fixed_grid_of_a_grid_stride_kernel(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, STRIDED, grid=("NBLK",), shapes=NBLK_SHAPES)
    a = applied("grid_size", spec)
    assert a.edits == () and a.knobs[0].default == 1 and 1 in a.knobs[0].values
    assert variant(spec, [a]).overlay["launch"]["grid"] == ["(NBLK) * PNCU_GRID"]


def test_grid_size_refuses_what_the_grid_decides(tmp_path: Path) -> None:
    plain = spec_of(tmp_path, ELEMENTWISE)
    assert "no grid-stride loop" in refused("grid_size", plain)
    per_block = STRIDED.replace("y[i] = 2.0f * x[i];", "{ y[i] = 2.0f * x[i]; "
                                "if (threadIdx.x == 0) y[blockIdx.x] = 0.0f; }")
    spec = spec_of(tmp_path, per_block, grid=("NBLK",), shapes=NBLK_SHAPES)
    assert "not interchangeable" in refused("grid_size", spec)
    args = [{"name": "y", "dtype": "fp32", "shape": ["NBLK"], "role": "output"},
            {"name": "x", "dtype": "fp32", "shape": ["n"], "role": "input"},
            {"name": "n", "dtype": "int32", "role": "scalar", "value": "n"}]
    sized = spec_of(tmp_path, STRIDED.replace("y[i] = 2.0f * x[i];", "y[0] += x[i];"),
                    grid=("NBLK",), args=args, shapes=NBLK_SHAPES)
    assert "args.y is sized by the grid" in refused("grid_size", sized)
