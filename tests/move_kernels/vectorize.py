"""vectorize's snippets: a bias add whose guard holds the work, with an access through another
index and a conditional store (`BIAS`), and a kernel on halves (`HALF`), with their arguments
and shapes."""

from __future__ import annotations

# The guard holding the work, an access through another index left as it is, a store under a
# condition (the old values must survive where it does not store).
BIAS = """extern "C" __global__ void k(float* y, const float* x, const float* bias, int n, int C)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i] + bias[i % C];
        if (v > 0.0f)
            y[i] = v;
    }
}
"""
BIAS_ARGS = [{"name": "y", "dtype": "fp32", "shape": ["n"], "role": "inout"},
             {"name": "x", "dtype": "fp32", "shape": ["n"], "role": "input"},
             {"name": "bias", "dtype": "fp32", "shape": ["C"], "role": "input"},
             {"name": "n", "dtype": "int32", "role": "scalar", "value": "n"},
             {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]
BIAS_SHAPES = [{"name": "main", "n": 1 << 20, "C": 768}, {"name": "odd", "n": 1001, "C": 7}]
HALF = """#include <cuda_fp16.h>
extern "C" __global__ void k(__half* y, const __half* x, int n)
{
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i >= n) return;
    y[i] = __hmul(x[i], x[i]);
}
"""
HALF_ARGS = [{"name": "y", "dtype": "fp16", "shape": ["n"], "role": "output"},
             {"name": "x", "dtype": "fp16", "shape": ["n"], "role": "input"},
             {"name": "n", "dtype": "int32", "role": "scalar", "value": "n"}]
