// residual_add_half_fast: out = x + res in fp16.
// Hand-written fast version of ../residual_add_half.cu: 16-byte loads and stores (uint4 = 8
// halves, added as 4 __half2 pairs by __hadd2, the same rounding as __hadd) in a grid-stride
// loop over a capped grid, the n % 8 tail in scalar; pointers not 16-byte aligned take the
// scalar loop for everything.
#include <cuda_fp16.h>
#include <stdint.h>

extern "C" __global__ void __launch_bounds__(256)
residual_add_half_fast(const __half* __restrict__ x, const __half* __restrict__ res,
                       __half* __restrict__ out, int n)
{
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t done = 0;
    if (((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(res) |
          reinterpret_cast<uintptr_t>(out)) & 15) == 0) {
        const size_t n8 = (size_t)n >> 3;
        const uint4* x8 = reinterpret_cast<const uint4*>(x);
        const uint4* r8 = reinterpret_cast<const uint4*>(res);
        uint4* o8 = reinterpret_cast<uint4*>(out);
        for (size_t i = tid; i < n8; i += stride) {
            const uint4 a = x8[i], b = r8[i];
            uint4 c;
            const __half2* ah = reinterpret_cast<const __half2*>(&a);
            const __half2* bh = reinterpret_cast<const __half2*>(&b);
            __half2* ch = reinterpret_cast<__half2*>(&c);
#pragma unroll
            for (int k = 0; k < 4; ++k) ch[k] = __hadd2(ah[k], bh[k]);
            o8[i] = c;
        }
        done = n8 << 3;
    }
    for (size_t i = done + tid; i < (size_t)n; i += stride) out[i] = __hadd(x[i], res[i]);
}
