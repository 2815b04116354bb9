// CORPUS (second hold-out) launch_overhead: the L2 norm of 32K floats, one block of 1024
// threads per 4K values plus an atomic per block: a few microseconds in all.
extern "C" __global__ void tiny_norm(float* out, const float* x, int n)
{
    __shared__ float part[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for (int j = i; j < n; j += gridDim.x * blockDim.x) v = fmaf(x[j], x[j], v);
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = part[threadIdx.x];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    }
}
