// softmax: row-wise softmax of x [R, C] (fp32) into y [R, C]:
//   y[r, c] = exp(x[r, c] - max_c x[r, :]) / sum_c exp(x[r, c] - max_c x[r, :])
// Deliberately naive: one block per row, three passes over the row in global memory
// (max, sum of exp, write), each reduction a shared-memory tree of BLOCK floats.
#ifndef BLOCK
#define BLOCK 256
#endif

// Tree reduction over the block's buf[0..blockDim.x); any block size works.
// On return every thread has the result; buf may be reused afterwards.
__device__ static float block_reduce(float v, float* buf, bool is_max)
{
    const int tid = threadIdx.x;
    const int n = blockDim.x;
    buf[tid] = v;
    __syncthreads();
    int p2 = 1;
    while (p2 < n) p2 <<= 1;
    for (int s = p2 / 2; s > 0; s >>= 1) {
        if (tid < s && tid + s < n)
            buf[tid] = is_max ? fmaxf(buf[tid], buf[tid + s]) : buf[tid] + buf[tid + s];
        __syncthreads();
    }
    float result = buf[0];
    __syncthreads();   // everyone has read buf[0] before it is overwritten
    return result;
}

extern "C" __global__ void softmax(const float* x, float* y, int C)
{
    __shared__ float buf[BLOCK];
    const long long row = (long long)blockIdx.x * C;

    float m = -INFINITY;
    for (int c = threadIdx.x; c < C; c += blockDim.x) m = fmaxf(m, x[row + c]);
    m = block_reduce(m, buf, true);

    float sum = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) sum += expf(x[row + c] - m);
    sum = block_reduce(sum, buf, false);

    const float inv_sum = 1.0f / sum;
    for (int c = threadIdx.x; c < C; c += blockDim.x) y[row + c] = expf(x[row + c] - m) * inv_sum;
}
