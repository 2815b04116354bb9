// CORPUS (held out) tail_effect: 512-thread blocks that each take ~150 KB of dynamic shared
// memory (one block per SM) and run the same two dependent FMA chains per thread. 178 blocks on
// 132 SMs = 1.35 waves: the second wave keeps 46 SMs busy for as long as the first and leaves
// 86 idle.
extern "C" __global__ void tail_compute(float* y, const float* x, int iters, float m)
{
    extern __shared__ float scratch[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = x[i], b = a + 1.0f;
    for (int it = 0; it < iters; ++it) { a = fmaf(a, m, 1.0f); b = fmaf(b, m, 2.0f); }
    scratch[threadIdx.x] = a + b;
    __syncthreads();
    y[i] = scratch[blockDim.x - 1 - threadIdx.x];
}
