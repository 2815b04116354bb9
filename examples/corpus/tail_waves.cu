// CORPUS tail_effect: 1.2 waves. Each 1024-thread block takes ~120 KB of dynamic shared memory,
// so one block runs per SM, and every block does the same dependent FMA chains (8 warps per
// scheduler keep the FMA pipe saturated while the block runs). 158 blocks on 132 SMs: the first
// wave fills every SM, the second runs 26 blocks while 106 SMs idle, for as long as the first.
// Fix: a grid that is a whole number of waves (or smaller blocks so more fit per SM).
extern "C" __global__ void tail_waves(float* y, const float* x, int iters, float m)
{
    extern __shared__ float scratch[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int it = 0; it < iters; ++it) v = fmaf(v, m, 1.0f);
    scratch[threadIdx.x] = v;
    __syncthreads();
    y[i] = scratch[threadIdx.x];
}
