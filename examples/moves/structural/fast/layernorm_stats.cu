// layernorm_stats_fast: layer norm over the last dimension writing out, mean and rstd.
// Hand-written fast version of ../layernorm_stats.cu: one warp per row (8 rows per 256-thread
// block), float4 loads when the rows are 16-byte aligned, butterfly shuffles for the two sums
// (the mean, then the centred sum of squares, re-reading the row from cache), float4 stores.
#include <stdint.h>

static __device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

extern "C" __global__ void __launch_bounds__(256)
layernorm_stats_fast(const float* __restrict__ x, const float* __restrict__ gamma,
                     const float* __restrict__ beta, float* __restrict__ out,
                     float* __restrict__ mean, float* __restrict__ rstd,
                     int N, int C, float eps)
{
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= N) return;  // a whole warp leaves together; no block-wide barrier below
    const float* xr = x + (size_t)row * C;
    float* orow = out + (size_t)row * C;
    const bool vec = (C & 3) == 0 &&
        ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(gamma) |
          reinterpret_cast<uintptr_t>(beta) | reinterpret_cast<uintptr_t>(out)) & 15) == 0;
    const int C4 = C >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(xr);

    float s = 0.0f;
    if (vec) {
        for (int i = lane; i < C4; i += 32) {
            const float4 v = x4[i];
            s += (v.x + v.y) + (v.z + v.w);
        }
    } else {
        for (int j = lane; j < C; j += 32) s += xr[j];
    }
    const float m = warp_sum(s) / C;

    float q = 0.0f;
    if (vec) {
        for (int i = lane; i < C4; i += 32) {
            const float4 v = x4[i];
            const float a = v.x - m, b = v.y - m, c = v.z - m, d = v.w - m;
            q += (a * a + b * b) + (c * c + d * d);
        }
    } else {
        for (int j = lane; j < C; j += 32) {
            const float a = xr[j] - m;
            q += a * a;
        }
    }
    const float rs = rsqrtf(warp_sum(q) / C + eps);

    if (vec) {
        const float4* g4 = reinterpret_cast<const float4*>(gamma);
        const float4* b4 = reinterpret_cast<const float4*>(beta);
        float4* o4 = reinterpret_cast<float4*>(orow);
        for (int i = lane; i < C4; i += 32) {
            const float4 v = x4[i], g = g4[i], b = b4[i];
            float4 o;
            o.x = (v.x - m) * rs * g.x + b.x;
            o.y = (v.y - m) * rs * g.y + b.y;
            o.z = (v.z - m) * rs * g.z + b.z;
            o.w = (v.w - m) * rs * g.w + b.w;
            o4[i] = o;
        }
    } else {
        for (int j = lane; j < C; j += 32) orow[j] = (xr[j] - m) * rs * gamma[j] + beta[j];
    }
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = rs;
    }
}
