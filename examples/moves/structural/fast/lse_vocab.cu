// lse_vocab_fast: lse[r] = log(sum_j exp(logits[r, j])) over a vocabulary-sized row.
// Hand-written fast version of ../lse_vocab.cu: ONE read of the row instead of two (each thread
// keeps a running max and a sum rescaled when the max grows, the online log-sum-exp), float4
// loads after peeling the 0-3 elements before the row's first 16-byte boundary (so an odd V
// such as 50257 still streams in 16-byte loads), then the threads' (max, sum) pairs merged by
// shuffles in each warp and across the 8 warps.
#include <stdint.h>
#include <float.h>

#define THREADS 256

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

extern "C" __global__ void __launch_bounds__(THREADS)
lse_vocab_fast(const float* __restrict__ logits, float* __restrict__ lse, int N, int V)
{
    __shared__ float wm[THREADS / 32], ws[THREADS / 32];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const float* xr = logits + (size_t)blockIdx.x * V;

    // the elements before the first 16-byte boundary (a float row starts 4-byte aligned)
    int head = (int)(((16u - (unsigned)(reinterpret_cast<uintptr_t>(xr) & 15u)) & 15u) >> 2);
    if (head > V) head = V;
    const int nvec = (V - head) >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(xr + head);

    float m = -FLT_MAX, s = 0.0f;
    if (tid < head) absorb(m, s, xr[tid]);
#pragma unroll 4
    for (int i = tid; i < nvec; i += THREADS) absorb4(m, s, __ldg(x4 + i));
    for (int j = head + 4 * nvec + tid; j < V; j += THREADS) absorb(m, s, xr[j]);  // 0-3 left

    warp_merge(m, s);
    if (lane == 0) {
        wm[warp] = m;
        ws[warp] = s;
    }
    __syncthreads();
    if (warp == 0) {  // all of warp 0
        m = lane < THREADS / 32 ? wm[lane] : -FLT_MAX;
        s = lane < THREADS / 32 ? ws[lane] : 0.0f;
        warp_merge(m, s);
        if (lane == 0) lse[blockIdx.x] = m + logf(s);
    }
}
