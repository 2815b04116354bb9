// fused_add_rmsnorm (bf16, in place, as in vLLM / SGLang):
//   residual = input + residual                      (stored back as bf16)
//   input    = residual * rsqrt(mean(residual^2) + eps) * weight
// The normalization uses the bf16-rounded residual, like vLLM; all math is in fp32.
// Deliberately naive: one block per row, scalar bf16 loads, a shared-memory tree
// reduction of BLOCK floats, and the row is read from global memory twice.
#include <cuda_bf16.h>

#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void fused_add_rmsnorm(__nv_bfloat16* input,
                                             __nv_bfloat16* residual,
                                             const __nv_bfloat16* weight,
                                             float eps,
                                             int H)
{
    __shared__ float buf[BLOCK];
    const int tid = threadIdx.x;
    const int nthreads = blockDim.x;   // equals BLOCK
    const long long row = (long long)blockIdx.x * H;

    // Pass 1: residual += input, rounded to bf16; accumulate the sum of squares.
    float sumsq = 0.0f;
    for (int h = tid; h < H; h += nthreads) {
        float r = __bfloat162float(input[row + h]) + __bfloat162float(residual[row + h]);
        __nv_bfloat16 rb = __float2bfloat16_rn(r);
        residual[row + h] = rb;
        float rf = __bfloat162float(rb);
        sumsq += rf * rf;
    }

    // Block reduction (works for any block size: stride starts at the next power of two / 2).
    buf[tid] = sumsq;
    __syncthreads();
    int p2 = 1;
    while (p2 < nthreads) p2 <<= 1;
    for (int s = p2 / 2; s > 0; s >>= 1) {
        if (tid < s && tid + s < nthreads) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    const float inv_rms = rsqrtf(buf[0] / (float)H + eps);

    // Pass 2: normalize the (bf16) residual and scale by weight, written into input.
    for (int h = tid; h < H; h += nthreads) {
        float rf = __bfloat162float(residual[row + h]);
        float w = __bfloat162float(weight[h]);
        input[row + h] = __float2bfloat16_rn(rf * inv_rms * w);
    }
}
