"""row_team's snippet: a softmax a thread a row (a max, a sum of what it stores, a
normalization that reads it back, a store of the row's own), and `softmax` its spec."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.spec.model import TaskSpec
from tests.fakes.moves import spec_of

# a thread per row: a max, a sum of what it stores, a normalization that reads it back, and
# a store of the row's own
SOFTMAX = """#include <math.h>
extern "C" __global__ void k(const float* x, float* out, float* sums, int N, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    const float* xr = x + (long long)r * C;
    float* o = out + (long long)r * C;
    float m = -INFINITY;
    for (int j = 0; j < C; ++j) {
        if (xr[j] > m) m = xr[j];
    }
    double s = 0.0;
    for (int j = 0; j < C; ++j) {
        o[j] = expf(xr[j] - m);
        s += o[j];
    }
    for (int j = 0; j < C; ++j) o[j] /= (float)s;
    sums[r] = (float)s;
}
"""
ROW_ARGS = [{"name": "x", "dtype": "fp32", "shape": ["N", "C"], "role": "input"},
            {"name": "out", "dtype": "fp32", "shape": ["N", "C"], "role": "output"},
            {"name": "sums", "dtype": "fp32", "shape": ["N"], "role": "output"},
            {"name": "N", "dtype": "int32", "role": "scalar", "value": "N"},
            {"name": "C", "dtype": "int32", "role": "scalar", "value": "C"}]
ROW_SHAPES = [{"name": "main", "N": 8192, "C": 1024}, {"name": "odd", "N": 37, "C": 101}]


def softmax(tmp: Path, source: str = SOFTMAX) -> TaskSpec:
    return spec_of(tmp, source, args=ROW_ARGS, shapes=ROW_SHAPES, grid=("ceil_div(N, 256)",))
