"""smem_tile's snippets: 2-D kernels that read a load across the grain of their stores (a
plain transpose, one with a scale and a bias, a permute of a batch's 2-D slice, the reverse
direction, two tiles, pointer arithmetic, halves), each with its spec (`transpose`, ...)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pragma_ncu.spec.model import TaskSpec
from tests.fakes.moves import spec_of

TRANSPOSE = """extern "C" __global__ void k(const float* in, float* out, int M, int N)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < N && y < M) {
        out[x * M + y] = in[y * N + x];
    }
}
"""
ARGS = [{"name": "in", "dtype": "fp32", "shape": ["M", "N"], "role": "input"},
        {"name": "out", "dtype": "fp32", "shape": ["N", "M"], "role": "output"},
        {"name": "M", "dtype": "int32", "role": "scalar", "value": "M"},
        {"name": "N", "dtype": "int32", "role": "scalar", "value": "N"}]
SHAPES = [{"name": "main", "M": 4096, "N": 8192}, {"name": "odd", "M": 37, "N": 45}]
GRID, BLOCK = ("ceil_div(N, 16)", "ceil_div(M, 16)"), ("16", "16")

# A scale and a bias, an early return, other names and casts, a 32 x 8 block.
AFFINE = """extern "C" __global__ void k(const float* __restrict__ src, float* __restrict__ dst,
                             const float* bias, float alpha, int rows, int cols)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (col >= cols || row >= rows) return;
    const float v = src[(size_t)row * cols + col];
    dst[(size_t)col * rows + row] = alpha * v + bias[col];
}
"""
AFFINE_ARGS = [{"name": "src", "dtype": "fp32", "shape": ["R", "C"], "role": "input"},
               {"name": "dst", "dtype": "fp32", "shape": ["C", "R"], "role": "output"},
               {"name": "bias", "dtype": "fp32", "shape": ["C"], "role": "input"},
               {"name": "alpha", "dtype": "fp32", "role": "scalar", "value": 1.5},
               {"name": "rows", "dtype": "int32", "role": "scalar", "value": "R"},
               {"name": "cols", "dtype": "int32", "role": "scalar", "value": "C"}]
AFFINE_SHAPES = [{"name": "main", "R": 8192, "C": 4096}, {"name": "odd", "R": 37, "C": 45}]
AFFINE_LAUNCH = {"grid": ("ceil_div(C, 32)", "ceil_div(R, 8)"), "block": ("32", "8")}

# NCHW -> NHWC of one image a blockIdx.z: the image's offset declared before the guard, a
# pointer to its slice after it.
PERMUTE = """extern "C" __global__ void k(const float* in, float* out, int C, int HW)
{
    const int n = blockIdx.z;
    const int hw = blockIdx.x * blockDim.x + threadIdx.x;
    const int c = blockIdx.y * blockDim.y + threadIdx.y;
    const size_t image = (size_t)n * C * HW;
    if (hw >= HW || c >= C) return;
    const float* plane = in + image;
    out[image + (size_t)hw * C + c] = plane[(size_t)c * HW + hw];
}
"""
PERMUTE_ARGS = [{"name": "in", "dtype": "fp32", "shape": ["B", "C", "HW"], "role": "input"},
                {"name": "out", "dtype": "fp32", "shape": ["B", "HW", "C"], "role": "output"},
                {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"},
                {"name": "HW", "dtype": "int32", "role": "scalar", "value": "HW"}]
PERMUTE_SHAPES = [{"name": "main", "B": 16, "C": 256, "HW": 3136},
                  {"name": "odd", "B": 3, "C": 19, "HW": 50}]
PERMUTE_LAUNCH = {"grid": ("ceil_div(HW, 16)", "ceil_div(C, 16)", "B"),
                  "block": ("16", "16", "1")}

# The reverse: the store walks x, the load (through __ldg) walks y; doubles, no braces.
REVERSE = """extern "C" __global__ void k(const double* a, double* b, int M, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // column of b
    int j = blockIdx.y * blockDim.y + threadIdx.y;  // row of b
    if (i < N && j < M)
        b[j * N + i] = __ldg(&a[i * M + j]) * 2.0;
}
"""
REVERSE_ARGS = [{"name": "a", "dtype": "fp64", "shape": ["N", "M"], "role": "input"},
                {"name": "b", "dtype": "fp64", "shape": ["M", "N"], "role": "output"},
                {"name": "M", "dtype": "int32", "role": "scalar", "value": "M"},
                {"name": "N", "dtype": "int32", "role": "scalar", "value": "N"}]

# Two loads across the grain (two tiles), one along it (read as written), a row vector;
# the index of one through a local, the other through a row pointer.
TWO = """extern "C" __global__ void k(const float* a, const float* b, const float* c,
                             const float* w, float* out, int M, int N)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= N) return;
    if (y >= M) return;
    const int across = y * N + x;
    const float* brow = b + (size_t)y * N;
    out[x * M + y] = a[across] - brow[x] * c[x * M + y] + w[y];
}
"""
TWO_ARGS = [{"name": "a", "dtype": "fp32", "shape": ["M", "N"], "role": "input"},
            {"name": "b", "dtype": "fp32", "shape": ["M", "N"], "role": "input"},
            {"name": "c", "dtype": "fp32", "shape": ["N", "M"], "role": "input"},
            {"name": "w", "dtype": "fp32", "shape": ["M"], "role": "input"},
            {"name": "out", "dtype": "fp32", "shape": ["N", "M"], "role": "output"},
            {"name": "M", "dtype": "int32", "role": "scalar", "value": "M"},
            {"name": "N", "dtype": "int32", "role": "scalar", "value": "N"}]

# Pointer arithmetic, `auto` indices declared y first, a row pointer in the guarded block.
DEREF = """extern "C" __global__ void k(const float* in, float* out, int M, int N)
{
    auto y = blockIdx.y * blockDim.y + threadIdx.y;
    auto x = blockIdx.x * blockDim.x + threadIdx.x;
    if (y < M && x < N) {
        const float* row = in + y * N;
        *(out + x * M + y) = 0.5f * *(row + x);
    }
}
"""
HALF = """#include <cuda_fp16.h>
extern "C" __global__ void k(const __half* in, __half* out, int M, int N)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < N && y < M)
        out[(long long)x * M + y] = __float2half(2.0f * __half2float(in[(long long)y * N + x]));
}
"""
HALF_ARGS = [{**a, "dtype": "fp16"} if a["role"] != "scalar" else a for a in ARGS]


def transpose(tmp: Path, source: str = TRANSPOSE, **kw: Any) -> TaskSpec:
    return spec_of(tmp, source, **{"args": ARGS, "shapes": SHAPES, "grid": GRID,
                                   "block": BLOCK, **kw})


def affine(tmp: Path, source: str = AFFINE) -> TaskSpec:
    return spec_of(tmp, source, args=AFFINE_ARGS, shapes=AFFINE_SHAPES, **AFFINE_LAUNCH)


def permute(tmp: Path) -> TaskSpec:
    return spec_of(tmp, PERMUTE, args=PERMUTE_ARGS, shapes=PERMUTE_SHAPES, **PERMUTE_LAUNCH)


def reverse(tmp: Path) -> TaskSpec:
    return spec_of(tmp, REVERSE, args=REVERSE_ARGS, shapes=SHAPES, grid=GRID, block=BLOCK)


def two(tmp: Path) -> TaskSpec:
    return spec_of(tmp, TWO, args=TWO_ARGS, shapes=SHAPES, grid=("ceil_div(N, 32)",
                                                                  "ceil_div(M, 8)"),
                   block=("32", "8"))


def deref(tmp: Path) -> TaskSpec:
    return transpose(tmp, DEREF)


def half(tmp: Path) -> TaskSpec:
    return spec_of(tmp, HALF, args=HALF_ARGS, shapes=SHAPES, grid=GRID, block=BLOCK)
