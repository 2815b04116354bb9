// layernorm: y[t, :] = (x[t, :] - mean) / sqrt(var + eps) * gamma + beta, per row t,
// with mean and (biased) variance over the H elements of the row.
// x, gamma, beta, y are fp16; all math is in fp32.
// Deliberately naive: one block per row, two-pass statistics (mean, then the sum of
// squared deviations), so the row is read from global memory three times; scalar fp16
// loads and a shared-memory tree reduction of BLOCK floats.
#include <cuda_fp16.h>

#ifndef BLOCK
#define BLOCK 256
#endif

// Sum over the block (any block size); every thread gets the result.
__device__ static float block_sum(float v, float* buf)
{
    const int tid = threadIdx.x;
    const int n = blockDim.x;
    buf[tid] = v;
    __syncthreads();
    int p2 = 1;
    while (p2 < n) p2 <<= 1;
    for (int s = p2 / 2; s > 0; s >>= 1) {
        if (tid < s && tid + s < n) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    float result = buf[0];
    __syncthreads();
    return result;
}

extern "C" __global__ void layernorm(const __half* x,
                                     const __half* gamma,
                                     const __half* beta,
                                     __half* y,
                                     float eps,
                                     int H)
{
    __shared__ float buf[BLOCK];
    const long long row = (long long)blockIdx.x * H;

    float sum = 0.0f;
    for (int h = threadIdx.x; h < H; h += blockDim.x) sum += __half2float(x[row + h]);
    const float mean = block_sum(sum, buf) / (float)H;

    float sq = 0.0f;
    for (int h = threadIdx.x; h < H; h += blockDim.x) {
        float dx = __half2float(x[row + h]) - mean;
        sq += dx * dx;
    }
    const float var = block_sum(sq, buf) / (float)H;
    const float inv_std = rsqrtf(var + eps);

    for (int h = threadIdx.x; h < H; h += blockDim.x) {
        float v = (__half2float(x[row + h]) - mean) * inv_std;
        y[row + h] = __float2half_rn(v * __half2float(gamma[h]) + __half2float(beta[h]));
    }
}
