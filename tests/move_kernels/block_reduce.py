"""block_reduce's snippets: row reductions through a block's shared-memory tree in several
styles (a sum, an interleaved sum of squares over double slots, a log-sum-exp of two trees,
an integer count), and `rows` their spec, a block a row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.moves import spec_of

ROWSUM = """extern "C" __global__ void k(const float* x, float* out, int R, int C)
{
    __shared__ float buf[256];
    const int tid = threadIdx.x;
    float acc = 0.0f;
    for (int j = tid; j < C; j += blockDim.x) acc += x[(long long)blockIdx.x * C + j];
    buf[tid] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = buf[0];
}
"""
ROW_ARGS = [{"name": "x", "dtype": "fp32", "shape": ["R", "C"], "role": "input"},
            {"name": "out", "dtype": "fp32", "shape": ["R"], "role": "output"},
            {"name": "R", "dtype": "int32", "role": "scalar", "value": "R"},
            {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]
ROW_SHAPES = [{"name": "main", "R": 8192, "C": 4096}, {"name": "odd", "R": 5, "C": 1001}]

# The interleaved form over threadIdx.x itself, double slots sized by a #define, a literal
# bound, every thread reading slot 0 after the tree.
SUMSQ = """#define THREADS 128
extern "C" __global__ void k(const float* x, float* out, int R, int C)
{
    __shared__ double part[THREADS];
    double ss = 0.0;
    for (int j = threadIdx.x; j < C; j += THREADS) {
        const double v = x[(size_t)blockIdx.x * C + j];
        ss += v * v;
    }
    part[threadIdx.x] = ss;
    __syncthreads();
    for (unsigned int s = 1; s < THREADS; s <<= 1) {
        if (threadIdx.x % (2 * s) == 0) {
            part[threadIdx.x] = part[threadIdx.x] + part[threadIdx.x + s];
        }
        __syncthreads();
    }
    const float inv = (float)(1.0 / sqrt(part[0] / C + 1e-6));
    for (int j = threadIdx.x; j < C; j += THREADS)
        out[(size_t)blockIdx.x * C + j] = x[(size_t)blockIdx.x * C + j] * inv;
}
"""
SUMSQ_ARGS = [{**a, "shape": ["R", "C"]} if a["name"] == "out" else a for a in ROW_ARGS]

# Two trees (a max written as a ternary, then a sum of exponentials), a `/= 2` stride.
LSE = """extern "C" __global__ void k(const float* x, float* out, int R, int C)
{
    __shared__ float top[64];
    __shared__ float total[64];
    unsigned t = threadIdx.x;
    const float* row = x + (long long)blockIdx.x * C;
    float m = -INFINITY;
    for (int j = t; j < C; j += blockDim.x) m = row[j] > m ? row[j] : m;
    top[t] = m;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) top[t] = top[t + s] > top[t] ? top[t + s] : top[t];
        __syncthreads();
    }
    const float mx = top[0];
    float e = 0.0f;
    for (int j = t; j < C; j += blockDim.x) e += expf(row[j] - mx);
    total[t] = e;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) total[t] += total[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = mx + logf(total[0]);
}
"""

# An integer count, exact in any order.
COUNT = """extern "C" __global__ void k(const float* x, int* out, int R, int C)
{
    __shared__ int hits[512];
    int i = threadIdx.x;
    int n = 0;
    for (int j = i; j < C; j += blockDim.x) n += x[blockIdx.x * C + j] > 0.5f;
    hits[i] = n;
    __syncthreads();
    for (int stride = 256; stride >= 1; stride >>= 1) {
        if (i < stride) { hits[i] = hits[i] + hits[i + stride]; }
        __syncthreads();
    }
    if (i == 0) out[blockIdx.x] = hits[0];
}
"""
COUNT_ARGS = [{**a, "dtype": "int32"} if a["name"] == "out" else a for a in ROW_ARGS]


def rows(tmp: Path, source: str = ROWSUM, args: list[dict[str, Any]] | None = None,
         block: str = "256", **kw: Any) -> Any:
    return spec_of(tmp, source, args=args or ROW_ARGS, grid=("R",), block=(block,),
                   shapes=ROW_SHAPES, **kw)
