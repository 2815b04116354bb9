// CORPUS occupancy_block: blocks of one warp. Hopper runs at most 32 blocks per SM, so 32 warps
// of 64 can be resident (50% theoretical occupancy) whatever the registers and shared memory
// allow; each thread makes one load, so half the possible bytes are in flight. Fix: blocks of
// 256 threads.
extern "C" __global__ void warp_blocks(float* y, const float* x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3.0f * x[i] - 1.0f;
}
