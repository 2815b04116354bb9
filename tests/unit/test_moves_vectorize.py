"""vectorize: VEC contiguous elements a thread through vector accesses, one by one where the
tail or a misaligned pointer needs it. The rewrite on snippets, its default giving back the
source, its refusals, its composition with the other moves, its launch at every shape, and
the rewritten kernel run thread by thread on the CPU against the source at odd lengths and
misaligned pointers."""

from __future__ import annotations

import ctypes
import math
from pathlib import Path

import numpy as np
import pytest

from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant
from pragma_ncu.spec import expr
from tests.fakes import cuda_on_cpu
from tests.fakes.moves import applied, refused, rendered, spec_of, variant
from tests.move_kernels.vectorize import BIAS, BIAS_ARGS, BIAS_SHAPES, HALF, HALF_ARGS

GELU = """#include <math.h>
extern "C" __global__ void k(float* y, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
}
"""


def test_vectorize_loads_computes_in_registers_and_stores_as_vectors(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, GELU)
    a = applied("vectorize", spec)
    (knob,) = a.knobs
    assert knob.name == "PNCU_VEC" and knob.default == 1 and knob.values == (1, 2, 4, 8)
    assert a.grid == ("ceil_div(ceil_div(n, 256), PNCU_VEC)",)
    four = rendered(spec, [a], PNCU_VEC=4)
    assert "template <typename T, int N> struct alignas" in four.split("extern")[0]
    assert "const long long pncu_first = (long long)(blockIdx.x * blockDim.x + threadIdx.x) * 4;" \
        in four
    assert ("if (!((int)(pncu_first) >= n) && !((int)(pncu_first + 4 - 1) >= n) && "
            "reinterpret_cast<unsigned long long>(y) % alignof(pncu_vec<float, 4>) == 0 && "
            "reinterpret_cast<unsigned long long>(x) % alignof(pncu_vec<float, 4>) == 0) {") \
        in four
    assert ("const pncu_vec<float, 4> pncu_x = *reinterpret_cast<const pncu_vec<float, 4>*>"
            "(x + pncu_first);") in four
    assert "        pncu_vec<float, 4> pncu_y;\n" in four  # stored only: not loaded
    assert "            float v = pncu_x.v[pncu_k];\n" in four
    assert "*reinterpret_cast<pncu_vec<float, 4>*>(y + pncu_first) = pncu_y;" in four
    # the fast path does not read i: no unused declaration of it there
    fast, slow = four.split("} else {")
    assert "int i =" not in fast
    # the scalar path: the thread's elements one by one through the guard as written
    assert ("        for (int pncu_k = 0; pncu_k < 4; ++pncu_k) {\n"
            "            int i = (int)(pncu_first + pncu_k);\n"
            "            if (i >= n) return;\n"
            "            float v = x[i];\n") in slow
    assert rendered(spec, [a], PNCU_VEC=1) == GELU


def test_the_block_guard_keeps_other_accesses_and_loads_a_conditional_store(
        tmp_path: Path) -> None:
    spec = spec_of(tmp_path, BIAS, args=BIAS_ARGS, shapes=BIAS_SHAPES)
    a = applied("vectorize", spec)
    assert a.sites[0].startswith("y, x: VEC elements a thread")  # bias[i % C] stays
    eight = rendered(spec, [a], PNCU_VEC=8)
    assert "pncu_vec<float, 8> pncu_y = *reinterpret_cast<const pncu_vec<float, 8>*>" \
        "(y + pncu_first);" in eight  # stored under a condition: loaded first
    assert "const float v = pncu_x.v[pncu_k] + bias[i % C];" in eight
    assert "const long long i = (long long)(pncu_first + pncu_k);" in eight
    assert "if (((long long)(pncu_first) < n) && ((long long)(pncu_first + 8 - 1) < n) && " \
        in eight
    assert rendered(spec, [a], PNCU_VEC=1) == BIAS


def test_the_widest_access_is_32_bytes_a_thread(tmp_path: Path) -> None:
    (knob,) = applied("vectorize", spec_of(tmp_path, HALF, args=HALF_ARGS)).knobs
    assert knob.values == (1, 2, 4, 8, 16)
    double = GELU.replace("float", "double").replace("tanhf", "tanh")
    args = [{"name": "y", "dtype": "fp64", "shape": ["n"], "role": "output"},
            {"name": "x", "dtype": "fp64", "shape": ["n"], "role": "input"},
            {"name": "n", "dtype": "int32", "role": "scalar", "value": "n"}]
    (knob,) = applied("vectorize", spec_of(tmp_path, double, args=args)).knobs
    assert knob.values == (1, 2, 4)


@pytest.mark.parametrize("vec", [1, 2, 4, 8])
def test_the_grid_covers_every_element_at_every_shape(tmp_path: Path, vec: int) -> None:
    built = variant(spec := spec_of(tmp_path, GELU), [applied("vectorize", spec)])
    grid = built.overlay["launch"]["grid"][0]
    for n in (1, 7, 1000, 1001, 1 << 20, (1 << 20) + 3):
        blocks = expr.evaluate_int(grid, {"n": n, "PNCU_VEC": vec}, "grid")
        assert blocks * 256 * vec >= n
        assert (blocks - 1) * 256 * vec < n  # no block without an element
        assert blocks == math.ceil(math.ceil(n / 256) / vec)


@pytest.mark.parametrize("old, new, why", [
    ("    float v = x[i];\n", "    __syncthreads();\n    float v = x[i];\n", "synchronizes"),
    ("{\n", "{\n    __shared__ float t[32];\n    t[0] = 0.f;\n", "shared memory"),
    ("    float v = x[i];\n", "    float v = x[i] + threadIdx.x;\n", "threadIdx.x outside"),
    ("    float v = x[i];\n", "    float v = x[i];\n    if (v < 0.f) return;\n", "returns"),
    ("if (i >= n) return;", "if (i >= n || x[i] != x[i]) return;", "not a bound on i"),
    ("    float v = x[i];\n", "    float v = x[i];\n    i += 1;\n", "changes i"),
    ("int i = blockIdx", "int pncu_i = 0; int i = blockIdx", "begin with pncu_"),
])
def test_vectorize_refuses_what_would_change_a_threads_elements(tmp_path: Path, old: str,
                                                                new: str, why: str) -> None:
    assert why in refused("vectorize", spec_of(tmp_path, GELU.replace(old, new)))


def test_an_array_touched_otherwise_than_as_p_i_is_not_vectorized(tmp_path: Path) -> None:
    shifted = GELU.replace("float v = x[i];", "float v = x[i] + x[i + 1];")
    a = applied("vectorize", spec_of(tmp_path, shifted))
    assert a.sites[0].startswith("y: VEC elements")
    atomic = GELU.replace("y[i] = 0.5f", "atomicAdd(&y[i], 0.5f").replace(
        "v * v * v)));", "v * v * v))));")
    b = applied("vectorize", spec_of(tmp_path, atomic))
    assert b.sites[0].startswith("x: VEC elements")
    strided = GELU.replace("float v = x[i];", "float v = x[2 * i];").replace("y[i]", "y[2 * i]")
    assert "no array the element's work reads or writes only as p[i]" in refused(
        "vectorize", spec_of(tmp_path, strided))


def test_vectorize_refuses_a_two_dimensional_block_and_a_kernel_without_an_element(
        tmp_path: Path) -> None:
    assert "the block is not one-dimensional" in refused(
        "vectorize", spec_of(tmp_path, GELU, grid=("ceil_div(n, 256)",), block=("128", "2")))
    rows = """extern "C" __global__ void k(float* y, const float* x, int n)
{
    for (int h = threadIdx.x; h < n; h += blockDim.x) y[blockIdx.x * n + h] = x[h];
}
"""
    assert "element index" in refused("vectorize", spec_of(tmp_path, rows, grid=("n",)))


def test_vectorize_composes_with_readonly_fast_math_and_block_size(tmp_path: Path) -> None:
    twice = BIAS.replace("            y[i] = v;\n",
                         "            y[i] = v;\n        y[i] += x[i];\n")
    spec = spec_of(tmp_path, twice, args=BIAS_ARGS, shapes=BIAS_SHAPES)
    moves = [applied(m, spec) for m in ("vectorize", "readonly", "block_size")]
    built = variant(spec, moves)
    assert built.overlay["launch"]["grid"] == ["ceil_div(ceil_div(n, PNCU_BLOCK), PNCU_VEC)"]
    text = asm.instance(built, {"PNCU_VEC": 4, "PNCU_READONLY": 1, "PNCU_BLOCK": 128})
    assert "const float* __restrict__ x" in text and "pncu_vec<float, 4>" in text
    gelu = spec_of(tmp_path, GELU)
    both = [applied("vectorize", gelu), applied("fast_math", gelu)]
    _, kept, _ = asm.assemble(asm.base_of(original_variant(gelu), gelu, {}), both, "m", "n")
    assert [a.move for a in kept] == ["vectorize", "fast_math"]


def test_vectorize_and_coarsen_both_rewrite_the_index_so_one_is_kept(tmp_path: Path) -> None:
    setup = GELU.replace("    if (i >= n) return;\n",
                         "    float s = 0.f;\n    for (int r = 0; r < 8; ++r) s += expf(r);\n"
                         "    if (i >= n) return;\n").replace("float v = x[i];",
                                                             "float v = x[i] * s;")
    spec = spec_of(tmp_path, setup)
    _, kept, refused_ = asm.assemble(asm.base_of(original_variant(spec), spec, {}),
                                     [applied("vectorize", spec), applied("coarsen", spec)],
                                     "m", "n")
    assert [a.move for a in kept] == ["vectorize"]
    assert refused_[0].move == "coarsen" and "overlap" in refused_[0].reason


# --- the rewrite run on the CPU, thread by thread --------------------------------------------

needs_cxx = pytest.mark.skipif(cuda_on_cpu.compiler() is None, reason="no C++ compiler")


def _run(kernel: cuda_on_cpu.Kernel, grid: int, arrays: list[np.ndarray],
         scalars: list[int]) -> None:
    kernel.launch(grid, 256, [*arrays, *(ctypes.c_int(s) for s in scalars)])


@needs_cxx
@pytest.mark.parametrize("vec", [2, 4, 8])
def test_the_rewrite_computes_what_the_source_does_at_any_length_and_alignment(
        tmp_path: Path, vec: int) -> None:
    spec = spec_of(tmp_path, BIAS, args=BIAS_ARGS, shapes=BIAS_SHAPES)
    text = rendered(spec, [applied("vectorize", spec)], PNCU_VEC=vec)
    plain = cuda_on_cpu.build(BIAS, "k", tmp_path, "plain")
    vector = cuda_on_cpu.build(text, "k", tmp_path, "vector")
    rng = np.random.default_rng(vec)
    C = 7
    for n in (1, 5, 255, 1000, 1001, 4099):
        for offset in (0, 1, 3):  # floats into an aligned buffer: misaligned for any VEC > 1
            x = np.zeros(n + offset, np.float32)
            x[offset:] = rng.standard_normal(n).astype(np.float32)
            bias = rng.standard_normal(C).astype(np.float32)
            y0, y1 = np.full(n + offset, 3.0, np.float32), np.full(n + offset, 3.0, np.float32)
            grid = math.ceil(n / 256)
            _run(plain, grid, [y0[offset:], x[offset:], bias], [n, C])
            _run(vector, math.ceil(grid / vec), [y1[offset:], x[offset:], bias], [n, C])
            assert np.array_equal(y0, y1), (n, offset)
            if n > 4:  # the conditional store both taken and not: the old values kept where not
                assert np.any(y0[offset:] == 3.0) and np.any(y0[offset:] != 3.0)
