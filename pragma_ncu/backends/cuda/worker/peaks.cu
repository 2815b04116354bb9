// Compute-ceiling microbenchmarks, one kernel per unit: enough independent work per thread and
// enough warps that the unit, not latency, is the limit. The worker times each over a full grid
// and reports operations per second (pragma_ncu.worker.ceiling). Every result is stored so the
// compiler keeps the work; a run-time multiplier of 1 keeps values finite and unfoldable.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
using namespace nvcuda;

#define CHAINS 8

// FP32: 8 independent FFMA chains per thread, `iters` steps: 2 FLOP per FFMA.
extern "C" __global__ void peak_ffma(float* out, int iters, float m)
{
    float v[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) v[c] = threadIdx.x + c;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) v[c] = fmaf(v[c], m, 1.0f);
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) s += v[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// FP64: the same with DFMA.
extern "C" __global__ void peak_dfma(double* out, int iters, double m)
{
    double v[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) v[c] = threadIdx.x + c;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) v[c] = fma(v[c], m, 1.0);
    }
    double s = 0.0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) s += v[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Special-function unit: 4 chains of MUFU.EX2 per thread (one op each; x -> 2^-x stays in
// (0.5, 1], so the chains neither overflow nor denormalize).
__device__ __forceinline__ float ex2_neg(float x)
{
    float y;
    asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(-x));
    return y;
}

extern "C" __global__ void peak_mufu(float* out, int iters)
{
    float a = threadIdx.x * 1e-6f, b = a + 0.1f, c = a + 0.2f, d = a + 0.3f;
    for (int i = 0; i < iters; ++i) {
        a = ex2_neg(a); b = ex2_neg(b); c = ex2_neg(c); d = ex2_neg(d);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}

// Tensor cores through warp-level MMA (wmma 16x16x16, fp32 accumulate): four independent
// accumulators per warp, `iters` steps; 2 * 16^3 FLOP per mma_sync. (Hopper's full tensor rate
// needs warpgroup MMA; this is the rate mma.sync code can reach.)
template <typename T>
__device__ void peak_mma(float* out, const T* a, const T* b, int iters)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4];
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
#pragma unroll
    for (int j = 0; j < 4; ++j) wmma::fill_fragment(acc[j], 0.0f);
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) wmma::mma_sync(acc[j], fa, fb, acc[j]);
    }
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
#pragma unroll
    for (int j = 1; j < 4; ++j)
        for (int e = 0; e < acc[0].num_elements; ++e) acc[0].x[e] += acc[j].x[e];
    wmma::store_matrix_sync(out + (long long)warp * 256, acc[0], 16, wmma::mem_row_major);
}

extern "C" __global__ void peak_hmma_fp16(float* out, const half* a, const half* b, int iters)
{
    peak_mma<half>(out, a, b, iters);
}

extern "C" __global__ void peak_hmma_bf16(float* out, const __nv_bfloat16* a,
                                          const __nv_bfloat16* b, int iters)
{
    peak_mma<__nv_bfloat16>(out, a, b, iters);
}

// FP8 (e4m3) tensor cores through mma.sync m16n8k32, fp32 accumulate (sm_89 and later; a no-op
// elsewhere, which the worker does not time): four independent accumulators per warp;
// 2 * 16 * 8 * 32 FLOP per mma.
extern "C" __global__ void peak_mma_fp8(float* out, const unsigned* ab, int iters)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    const int lane = threadIdx.x % 32;
    unsigned a0 = ab[lane % 8], a1 = ab[(lane + 1) % 8], a2 = ab[(lane + 2) % 8],
             a3 = ab[(lane + 3) % 8], b0 = ab[(lane + 4) % 8], b1 = ab[(lane + 5) % 8];
    float d[4][4] = {};
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            asm volatile(
                "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}
