// residual_add_half: out = x + res in fp16 (the residual connection of a half-precision
// transformer block), one thread per element.
#include <cuda_fp16.h>

extern "C" __global__ void residual_add_half(const __half* x, const __half* res, __half* out, int n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)n) return;
    out[i] = __hadd(x[i], res[i]);
}
