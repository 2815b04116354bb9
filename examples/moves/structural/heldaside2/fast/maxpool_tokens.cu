// maxpool_tokens_fast: vmax[b, c] = max over t of x[b, t, c], arg[b, c] = the first such t.
// Hand-written fast version of ../maxpool_tokens.cu: a 512-thread block per (batch, strip of
// 128 channels). Its 16 warps split the tokens (warp w takes t = w, w + 16, ...); in a warp the
// lanes read one token's strip as a coalesced 512-byte row, a float4 per lane (4 adjacent
// channels), 4 tokens per iteration so 4 loads are in flight per lane. The 16 partial
// (max, first t) per channel merge in shared memory, ties to the smaller t. C % 4 != 0 or an
// unaligned x: the same loops with scalar lanes (channels lane + 32 e).
#include <stdint.h>

#define GROUPS 16
#define STRIP 128

static __device__ __forceinline__ void upd(float& bv, int& bi, float v, int t)
{
    if (v > bv) {
        bv = v;
        bi = t;
    }
}

extern "C" __global__ void __launch_bounds__(512)
maxpool_tokens_fast(const float* __restrict__ x, float* __restrict__ vmax, int* __restrict__ arg,
                    int B, int T, int C)
{
    __shared__ float sv[GROUPS][STRIP];
    __shared__ int si[GROUPS][STRIP];
    const int lane = threadIdx.x & 31;
    const int w = threadIdx.x >> 5;
    const int b = blockIdx.y;
    const int c0 = blockIdx.x * STRIP;
    const float* xb = x + (size_t)b * T * C;
    const size_t step = (size_t)GROUPS * C;

    float bv[4];
    int bi[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        bv[e] = -INFINITY;
        bi[e] = T;
    }

    if ((C & 3) == 0 && (reinterpret_cast<uintptr_t>(x) & 15) == 0) {
        // lane: channels c0 + 4 lane + e (slot 4 lane + e)
        const int c = c0 + 4 * lane;
        if (c < C) {
            const float* p = xb + (size_t)w * C + c;
            int t = w;
            for (; t + 3 * GROUPS < T; t += 4 * GROUPS, p += 4 * step) {
                const float4 v0 = *reinterpret_cast<const float4*>(p);
                const float4 v1 = *reinterpret_cast<const float4*>(p + step);
                const float4 v2 = *reinterpret_cast<const float4*>(p + 2 * step);
                const float4 v3 = *reinterpret_cast<const float4*>(p + 3 * step);
                upd(bv[0], bi[0], v0.x, t); upd(bv[1], bi[1], v0.y, t);
                upd(bv[2], bi[2], v0.z, t); upd(bv[3], bi[3], v0.w, t);
                upd(bv[0], bi[0], v1.x, t + GROUPS); upd(bv[1], bi[1], v1.y, t + GROUPS);
                upd(bv[2], bi[2], v1.z, t + GROUPS); upd(bv[3], bi[3], v1.w, t + GROUPS);
                upd(bv[0], bi[0], v2.x, t + 2 * GROUPS); upd(bv[1], bi[1], v2.y, t + 2 * GROUPS);
                upd(bv[2], bi[2], v2.z, t + 2 * GROUPS); upd(bv[3], bi[3], v2.w, t + 2 * GROUPS);
                upd(bv[0], bi[0], v3.x, t + 3 * GROUPS); upd(bv[1], bi[1], v3.y, t + 3 * GROUPS);
                upd(bv[2], bi[2], v3.z, t + 3 * GROUPS); upd(bv[3], bi[3], v3.w, t + 3 * GROUPS);
            }
            for (; t < T; t += GROUPS, p += step) {
                const float4 v0 = *reinterpret_cast<const float4*>(p);
                upd(bv[0], bi[0], v0.x, t); upd(bv[1], bi[1], v0.y, t);
                upd(bv[2], bi[2], v0.z, t); upd(bv[3], bi[3], v0.w, t);
            }
        }
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            sv[w][4 * lane + e] = bv[e];
            si[w][4 * lane + e] = bi[e];
        }
    } else {
        // lane: channels c0 + lane + 32 e (slot lane + 32 e), coalesced 4-byte loads
        const float* p = xb + (size_t)w * C + c0 + lane;
        int t = w;
        for (; t + GROUPS < T; t += 2 * GROUPS, p += 2 * step) {
            float v0[4], v1[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool in = c0 + lane + 32 * e < C;
                v0[e] = in ? p[32 * e] : -INFINITY;
                v1[e] = in ? p[step + 32 * e] : -INFINITY;
            }
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                upd(bv[e], bi[e], v0[e], t);
                upd(bv[e], bi[e], v1[e], t + GROUPS);
            }
        }
        for (; t < T; t += GROUPS, p += step) {
#pragma unroll
            for (int e = 0; e < 4; ++e)
                if (c0 + lane + 32 * e < C)
                    upd(bv[e], bi[e], p[32 * e], t);
        }
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            sv[w][lane + 32 * e] = bv[e];
            si[w][lane + 32 * e] = bi[e];
        }
    }
    __syncthreads();

    if (threadIdx.x < STRIP) {
        const int s = threadIdx.x;
        const int c = c0 + s;
        if (c < C) {
            float v = sv[0][s];
            int i = si[0][s];
#pragma unroll
            for (int g = 1; g < GROUPS; ++g) {
                const float v2 = sv[g][s];
                const int i2 = si[g][s];
                if (v2 > v || (v2 == v && i2 < i)) {
                    v = v2;
                    i = i2;
                }
            }
            vmax[(size_t)b * C + c] = v;
            arg[(size_t)b * C + c] = i;
        }
    }
}
