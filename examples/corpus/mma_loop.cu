// CORPUS tensor_core: each warp loads one 16x16 fp16 A and B fragment, then runs a long chain of
// wmma mma_sync (HMMA) on register data into four independent fp32 accumulators, and stores them:
// the tensor pipe is the busiest unit, memory traffic is negligible.
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void mma_loop(float* out, const half* a, const half* b, int iters)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4];
    wmma::load_matrix_sync(fa, a + (long long)warp * 256, 16);
    wmma::load_matrix_sync(fb, b + (long long)warp * 256, 16);
#pragma unroll
    for (int j = 0; j < 4; ++j) wmma::fill_fragment(acc[j], 0.0f);
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int j = 0; j < 4; ++j) wmma::mma_sync(acc[j], fa, fb, acc[j]);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
        wmma::store_matrix_sync(out + ((long long)warp * 4 + j) * 256, acc[j], 16,
                                wmma::mem_row_major);
}
