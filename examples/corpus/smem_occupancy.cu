// CORPUS occupancy_shared: each 128-thread block asks for ~100 KB of dynamic shared memory (the
// launch's shared_mem) but stages one word per thread in it. Two blocks fit on an SM: 8 warps of
// 64 (12.5% theoretical occupancy). Each thread makes one load, so with so few warps almost no
// bytes are in flight and DRAM idles while warps wait (long scoreboard). Fix: size the shared
// buffer to what the block uses, so 16 blocks fit.
extern "C" __global__ void smem_occupancy(float* y, const float* x, int n)
{
    extern __shared__ float stage[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    stage[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncwarp();
    if (i < n) y[i] = 2.0f * stage[threadIdx.x ^ 1] + 1.0f;
}
