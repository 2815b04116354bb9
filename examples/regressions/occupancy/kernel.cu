// REGRESSION PAIR occupancy: one kernel, launched with 1024-thread blocks (base.toml) and with
// 128-thread blocks (new.toml).
// y[i] = 2 x[i ^ 1] + 1: each thread stages its value in a shared scratch array and reads back
// its lane partner's (a warp-local exchange; blocks rotate through the scratch rows).
// The scratch array is sized for the LARGEST block (SCRATCH * MAX_BLOCK floats = 40 KB), so
// every block reserves 40 KB whatever its size: 5 blocks fit in an SM's 228 KB.
//   BLOCK = 1024: 2 blocks/SM (warp limit) = 64 warps, 100% theoretical occupancy.
//   BLOCK = 128:  5 blocks/SM (shared-memory limit) = 20 warps, 31% theoretical occupancy.
// Each thread has one 4-byte load in flight, so the bytes in flight per SM (and the achieved
// bandwidth) scale with the resident warps: the smaller block makes the kernel ~3x slower.
#ifndef SCRATCH
#define SCRATCH 10
#endif
#define MAX_BLOCK 1024

extern "C" __global__ void __launch_bounds__(MAX_BLOCK)
pair_swap(float* y, const float* x, int n)
{
    __shared__ float scratch[SCRATCH * MAX_BLOCK];  // sized for the largest block
    const int t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    float* row = scratch + (blockIdx.x % SCRATCH) * MAX_BLOCK;
    row[t] = i < n ? x[i] : 0.0f;
    __syncwarp();
    const float partner = row[t ^ 1];  // lane pairs never straddle a warp
    if (i < n) y[i] = fmaf(2.0f, partner, 1.0f);
}
