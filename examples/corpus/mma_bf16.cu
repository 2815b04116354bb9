// CORPUS (held out) tensor_core: bf16 wmma 16x16x16 products chained on register fragments, two
// A fragments times one B fragment into two accumulators per step: HMMA keeps the tensor pipe
// the busiest unit while memory is idle.
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
extern "C" __global__ void mma_bf16(float* out, const __nv_bfloat16* a, const __nv_bfloat16* b,
                                    int iters)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa0, fa1;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c0, c1;
    wmma::load_matrix_sync(fa0, a + (long long)warp * 512, 16);
    wmma::load_matrix_sync(fa1, a + (long long)warp * 512 + 256, 16);
    wmma::load_matrix_sync(fb, b + (long long)warp * 256, 16);
    wmma::fill_fragment(c0, 0.0f);
    wmma::fill_fragment(c1, 0.0f);
    for (int it = 0; it < iters; ++it) {
        wmma::mma_sync(c0, fa0, fb, c0);
        wmma::mma_sync(c1, fa1, fb, c1);
    }
    wmma::store_matrix_sync(out + (long long)warp * 512, c0, 16, wmma::mem_row_major);
    wmma::store_matrix_sync(out + (long long)warp * 512 + 256, c1, 16, wmma::mem_row_major);
}
