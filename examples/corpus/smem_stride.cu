// CORPUS (held out) shared_bank_conflicts: each warp stages 1024 words in shared memory and then
// reads them back with a stride of 16 words per lane: lanes l and l+2 hit the same bank, a
// 16-way conflict on every read of the loop.
extern "C" __global__ void smem_stride(float* y, const float* x, int reps)
{
    __shared__ float buf[8][1024];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long base = ((long long)blockIdx.x * 8 + warp) * 1024;
    for (int k = lane; k < 1024; k += 32) buf[warp][k] = x[base + k];
    __syncwarp();
    float s = 0.0f;
    for (int r = 0; r < reps; ++r)
#pragma unroll 4
        for (int k = 0; k < 64; ++k) s += buf[warp][(lane * 16 + k + r) & 1023];
    y[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
