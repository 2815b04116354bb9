"""block_columns' snippets: column reductions a block a column (a sum, a maximum with two
outputs, a mean through a pointer to the column), `SOURCES` each with its arguments and block,
and `columns` their spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.moves import spec_of

COLSUM = """extern "C" __global__ void k(const float* x, float* out, int N, int C)
{
    __shared__ float buf[256];
    const int c = blockIdx.x;
    float sum = 0.f;
    for (int r = threadIdx.x; r < N; r += blockDim.x)
        sum += x[(long long)r * C + c];
    buf[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s = s / 2) {
        if (threadIdx.x < s)
            buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[c] = buf[0];
}
"""
COL_ARGS = [{"name": "x", "dtype": "fp32", "shape": ["N", "C"], "role": "input"},
            {"name": "out", "dtype": "fp32", "shape": ["C"], "role": "output"},
            {"name": "N", "dtype": "int32", "role": "scalar", "value": "N"},
            {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]
COL_SHAPES = [{"name": "main", "N": 8192, "C": 3072}, {"name": "odd", "N": 37, "C": 61}]

# A maximum written as a ternary in the loop and as fmaxf in the interleaved tree, a name for
# the thread, a column index cast and declared first, every thread reading slot 0 before
# thread 0's test, two outputs.
COLMAX = """extern "C" __global__ void k(const float* x, float* peak, float* half, int N, int C)
{
    const unsigned col = (unsigned)blockIdx.x;
    __shared__ float best[128];
    const int t = threadIdx.x;
    float m = -INFINITY;
    for (int r = t; r < N; r += 128) {
        const float v = x[(long long)r * C + col];
        m = v > m ? v : m;
    }
    best[t] = m;
    __syncthreads();
    for (int s = 1; s < blockDim.x; s *= 2) {
        if (t % (2 * s) == 0)
            best[t] = fmaxf(best[t], best[t + s]);
        __syncthreads();
    }
    const float top = best[0];
    if (t == 0) {
        peak[col] = top;
        half[col] = 0.5f * top;
    }
}
"""
COLMAX_ARGS = [{"name": "x", "dtype": "fp32", "shape": ["N", "C"], "role": "input"},
               {"name": "peak", "dtype": "fp32", "shape": ["C"], "role": "output"},
               {"name": "half", "dtype": "fp32", "shape": ["C"], "role": "output"},
               {"name": "N", "dtype": "int32", "role": "scalar", "value": "N"},
               {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]

# A pointer to the column, double sums, a `/= 2` tree from a literal, the columns' count a
# scalar of another name than the dimension's.
COLMEAN = """extern "C" __global__ void k(const float* x, float* mean, int rows, int ncols)
{
    __shared__ double part[256];
    const int j = blockIdx.x;
    const float* p = x + j;
    double sum = 0.0;
    for (int i = threadIdx.x; i < rows; i += blockDim.x)
        sum += p[(long long)i * ncols];
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int s = 128; s > 0; s /= 2) {
        if (threadIdx.x < s) part[threadIdx.x] = part[threadIdx.x] + part[threadIdx.x + s];
        __syncthreads();
    }
    if (0 == threadIdx.x) mean[j] = (float)(part[0] / rows);
}
"""
COLMEAN_ARGS = [{"name": "x", "dtype": "fp32", "shape": ["N", "C"], "role": "input"},
                {"name": "mean", "dtype": "fp32", "shape": ["C"], "role": "output"},
                {"name": "rows", "dtype": "int32", "role": "scalar", "value": "N"},
                {"name": "ncols", "dtype": "int32", "role": "scalar", "value": "C"}]
SOURCES = {"colsum": (COLSUM, COL_ARGS, "256"), "colmax": (COLMAX, COLMAX_ARGS, "128"),
           "colmean": (COLMEAN, COLMEAN_ARGS, "256")}


def columns(tmp: Path, source: str = COLSUM, args: list[dict[str, Any]] | None = None,
            block: str = "256", grid: str = "C") -> Any:
    return spec_of(tmp, source, args=args or COL_ARGS, grid=(grid,), block=(block,),
                   shapes=COL_SHAPES)
