// l2norm_heads_fast: y = x / max(||x||_2, eps) for each row of x [R, D] fp32.
// Hand-written fast version of ../l2norm_heads.cu: a warp per row (8 rows per 256-thread block),
// float4 loads when D % 4 == 0 and both pointers are 16-byte aligned (else coalesced scalar
// lanes), the sum of squares in fp32 reduced by xor shuffles. The first two float4 of each lane
// (rows up to 256 floats) stay in registers for the store; longer rows are re-read (L1 hits).
#include <stdint.h>

static __device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

static __device__ __forceinline__ float sq4(float4 v)
{
    return v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
}

static __device__ __forceinline__ float4 mul4(float4 v, float s)
{
    return make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
}

extern "C" __global__ void __launch_bounds__(256)
l2norm_heads_fast(const float* __restrict__ x, float* __restrict__ y, int R, int D, float eps)
{
    const int lane = threadIdx.x & 31;
    const long long r = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (r >= R)
        return;                                  // the whole warp: one row per warp
    const float* xr = x + r * D;
    float* yr = y + r * D;

    if ((D & 3) == 0 && ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) & 15) == 0) {
        const int d4 = D >> 2;
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        float4* y4 = reinterpret_cast<float4*>(yr);
        float4 c0 = make_float4(0.f, 0.f, 0.f, 0.f);
        float4 c1 = c0;
        if (lane < d4)
            c0 = x4[lane];
        if (lane + 32 < d4)
            c1 = x4[lane + 32];
        float ss = sq4(c0) + sq4(c1);
        for (int j = lane + 64; j < d4; j += 32)
            ss += sq4(x4[j]);
        ss = warp_sum(ss);
        const float inv = 1.0f / fmaxf(sqrtf(ss), eps);
        if (lane < d4)
            y4[lane] = mul4(c0, inv);
        if (lane + 32 < d4)
            y4[lane + 32] = mul4(c1, inv);
        for (int j = lane + 64; j < d4; j += 32)
            y4[j] = mul4(x4[j], inv);
        return;
    }

    float ss = 0.0f;
    for (int j = lane; j < D; j += 32) {
        const float v = xr[j];
        ss += v * v;
    }
    ss = warp_sum(ss);
    const float inv = 1.0f / fmaxf(sqrtf(ss), eps);
    for (int j = lane; j < D; j += 32)
        yr[j] = xr[j] * inv;
}
