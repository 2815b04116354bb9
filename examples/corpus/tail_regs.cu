// CORPUS (second hold-out) tail_effect: 256-thread blocks that each take ~110 KB of dynamic shared
// memory (two blocks per SM) and run the same dependent FMA chains; 290 blocks on 264 slots is
// 1.1 waves: the second wave keeps 26 SMs busy for a whole block time.
extern "C" __global__ void tail_regs(float* y, const float* x, int iters, float m)
{
    extern __shared__ float scratch[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = x[i], b = a + 2.0f, c = a + 4.0f;
    for (int it = 0; it < iters; ++it) { a = fmaf(a, m, 1.0f); b = fmaf(b, m, 1.0f); c = fmaf(c, m, 1.0f); }
    scratch[threadIdx.x] = a + b + c;
    __syncthreads();
    y[i] = scratch[(threadIdx.x + 1) & 255];
}
