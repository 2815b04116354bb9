// CORPUS (second hold-out) shared_bank_conflicts: 64-bit shared-memory reads at a stride of 8
// doubles per lane: lanes 0, 4, 8, ... share a bank pair, an 8-way conflict on every read of the
// inner loop.
extern "C" __global__ void smem_bcast_conflict(double* y, const double* x, int reps)
{
    __shared__ double buf[4][512];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long base = ((long long)blockIdx.x * 4 + warp) * 512;
    for (int k = lane; k < 512; k += 32) buf[warp][k] = x[base + k];
    __syncwarp();
    double s = 0.0;
    for (int r = 0; r < reps; ++r)
#pragma unroll 4
        for (int k = 0; k < 32; ++k) s += buf[warp][(lane * 8 + k + r) & 511];
    y[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
