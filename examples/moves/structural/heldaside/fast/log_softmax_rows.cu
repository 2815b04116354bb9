// log_softmax_rows_fast: out[r, j] = x[r, j] - max - log(sum exp(x[r, :] - max)).
// Hand-written fast version of ../log_softmax_rows.cu: one warp per row (8 rows per 256-thread
// block) instead of one serial thread; all lanes read the row once in float4 keeping a running
// (max, sum) each (the sum rescaled when the max grows), merge the pairs by shuffles, and write
// the row in float4 on a second read. Rows not 16-byte aligned use scalar accesses.
#include <stdint.h>
#include <float.h>

// m starts at -FLT_MAX, never -inf: merging two empty pairs then gives 0 * exp(0), not NaN.
static __device__ __forceinline__ void absorb(float& m, float& s, float v)
{
    if (v > m) {
        s = s * expf(m - v) + 1.0f;
        m = v;
    } else {
        s += expf(v - m);
    }
}

// the same for four values: one comparison and at most one rescale per float4
static __device__ __forceinline__ void absorb4(float& m, float& s, float4 v)
{
    const float mv = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
    if (mv > m) {
        s *= expf(m - mv);
        m = mv;
    }
    s += (expf(v.x - m) + expf(v.y - m)) + (expf(v.z - m) + expf(v.w - m));
}

static __device__ __forceinline__ void warp_merge(float& m, float& s)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float mo = __shfl_xor_sync(0xffffffffu, m, off);
        const float so = __shfl_xor_sync(0xffffffffu, s, off);
        const float mn = fmaxf(m, mo);
        s = s * expf(m - mn) + so * expf(mo - mn);
        m = mn;
    }
}

extern "C" __global__ void __launch_bounds__(256)
log_softmax_rows_fast(const float* __restrict__ x, float* __restrict__ out, int N, int C)
{
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= N) return;  // a whole warp leaves together; no block-wide barrier below
    const float* xr = x + (size_t)row * C;
    float* orow = out + (size_t)row * C;
    const bool vec = (C & 3) == 0 &&
        ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(out)) & 15) == 0;
    const int C4 = C >> 2;

    float m = -FLT_MAX, s = 0.0f;
    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        for (int i = lane; i < C4; i += 32) absorb4(m, s, x4[i]);
    } else {
        for (int j = lane; j < C; j += 32) absorb(m, s, xr[j]);
    }
    warp_merge(m, s);
    const float shift = m + logf(s);

    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        float4* o4 = reinterpret_cast<float4*>(orow);
        for (int i = lane; i < C4; i += 32) {
            const float4 v = x4[i];
            o4[i] = make_float4(v.x - shift, v.y - shift, v.z - shift, v.w - shift);
        }
    } else {
        for (int j = lane; j < C; j += 32) orow[j] = xr[j] - shift;
    }
}
