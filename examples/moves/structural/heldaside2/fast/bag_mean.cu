// bag_mean_fast: an embedding bag in mean mode, out[b, :] = mean of table[idx[b, k], :].
// Hand-written fast version of ../bag_mean.cu: a warp per bag (8 bags per 256-thread block);
// the lanes cover a 512-column stretch of the row as four float4 each, so for every id of the
// bag a lane has four independent 16-byte loads in flight (the ids are read once per stretch,
// warp-uniform, from L1); float4 stores of the means. Rows of D % 4 != 0 columns, or unaligned
// pointers, take the same loop with scalar lanes (coalesced 4-byte loads).
#include <stdint.h>

#define BAGS 8
#define U 4

extern "C" __global__ void __launch_bounds__(256)
bag_mean_fast(const int* __restrict__ idx, const float* __restrict__ table, float* __restrict__ out,
              int B, int K, int D)
{
    const int lane = threadIdx.x & 31;
    const int b = blockIdx.x * BAGS + (threadIdx.x >> 5);
    if (b >= B)
        return;                                  // the whole warp
    const int* ids = idx + (size_t)b * K;
    const float inv = 1.0f / (float)K;

    if ((D & 3) == 0 && ((reinterpret_cast<uintptr_t>(table) | reinterpret_cast<uintptr_t>(out)) & 15) == 0) {
        const int d4 = D >> 2;
        const float4* t4 = reinterpret_cast<const float4*>(table);
        float4* o4 = reinterpret_cast<float4*>(out) + (size_t)b * d4;
        for (int base = 0; base < d4; base += 32 * U) {
            float4 acc[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
                acc[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            for (int k = 0; k < K; ++k) {
                const float4* row = t4 + (size_t)__ldg(ids + k) * d4;
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const int c = base + lane + 32 * u;
                    if (c < d4) {
                        const float4 v = __ldg(row + c);
                        acc[u].x += v.x;
                        acc[u].y += v.y;
                        acc[u].z += v.z;
                        acc[u].w += v.w;
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int c = base + lane + 32 * u;
                if (c < d4)
                    o4[c] = make_float4(acc[u].x * inv, acc[u].y * inv, acc[u].z * inv, acc[u].w * inv);
            }
        }
        return;
    }

    float* orow = out + (size_t)b * D;
    for (int base = 0; base < D; base += 32 * U) {
        float acc[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
            acc[u] = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float* row = table + (size_t)__ldg(ids + k) * D;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int c = base + lane + 32 * u;
                if (c < D)
                    acc[u] += __ldg(row + c);
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int c = base + lane + 32 * u;
            if (c < D)
                orow[c] = acc[u] * inv;
        }
    }
}
