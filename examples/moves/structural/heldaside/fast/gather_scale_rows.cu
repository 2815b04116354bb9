// gather_scale_rows_fast: out[k, :] = table[ids[k], :] * scale[k].
// Hand-written fast version of ../gather_scale_rows.cu: one warp per output row, 8 rows per
// 256-thread block (instead of 32-thread blocks, which cap an SM at half its threads), float4
// loads and stores unrolled for several loads in flight per lane when C % 4 == 0 and the
// pointers are 16-byte aligned, scalar but coalesced otherwise.
#include <stdint.h>

extern "C" __global__ void __launch_bounds__(256)
gather_scale_rows_fast(const float* __restrict__ table, const int* __restrict__ ids,
                       const float* __restrict__ scale, float* __restrict__ out, int K, int C)
{
    const int lane = threadIdx.x & 31;
    const int k = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (k >= K) return;
    const float* t = table + (size_t)__ldg(ids + k) * C;
    const float s = __ldg(scale + k);
    float* o = out + (size_t)k * C;
    if ((C & 3) == 0 &&
        ((reinterpret_cast<uintptr_t>(table) | reinterpret_cast<uintptr_t>(out)) & 15) == 0) {
        const float4* t4 = reinterpret_cast<const float4*>(t);
        float4* o4 = reinterpret_cast<float4*>(o);
        const int C4 = C >> 2;
#pragma unroll 4
        for (int i = lane; i < C4; i += 32) {
            const float4 v = __ldg(t4 + i);
            o4[i] = make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
        }
    } else {
#pragma unroll 4
        for (int j = lane; j < C; j += 32) o[j] = __ldg(t + j) * s;
    }
}
