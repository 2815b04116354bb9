// CORPUS small_grid (root) with exposed memory latency (symptom): a sum over 64 MB with a
// grid-stride loop launched on 32 blocks of 256 threads. 100 of 132 SMs get no block, and the 32
// busy SMs hold 8 warps each, far too few loads in flight to pull DRAM bandwidth. Each block
// writes its partial sum. Fix: a grid of a few blocks per SM (>= 264), then a second pass.
extern "C" __global__ void reduce_few_blocks(float* partial, const float* x, int n)
{
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += x[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    __shared__ float warp_sums[32];
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < (blockDim.x >> 5) ? warp_sums[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) partial[blockIdx.x] = s;
    }
}
