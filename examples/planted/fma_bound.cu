// PLANTED: compute_fma.
// y[i] = sum_k acc_k where acc_k starts at float(x[i]) and takes `iters` steps of
// acc_k = acc_k * m + (k + 1) for k = 0..7 (m = 1.0 at run time, so the compiler must keep
// every FFMA, and all values stay exact integers below 2^24). Eight independent chains per
// thread give each warp ILP 8, a big grid gives 16 warps per scheduler, and memory traffic is
// one 4-byte load and one 4-byte store per 8 * iters FFMAs: the FMA pipe runs near its peak
// (sm__pipe_fma_cycles_active / sm__inst_executed_pipe_fma near 100%), nothing else is busy.
// At the roofline already: the only big win would be tensor cores or less arithmetic.
#define CHAINS 8

extern "C" __global__ void fma_bound(float* y, const int* x, int n, int iters, float m)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float x0 = (float)x[i];
    float acc[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) acc[k] = x0;
#pragma unroll 16
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < CHAINS; ++k) acc[k] = fmaf(acc[k], m, (float)(k + 1));  // 8 independent FFMAs
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) s += acc[k];
    y[i] = s;
}
