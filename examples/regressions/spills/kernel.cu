// REGRESSION PAIR spills: one kernel, compiled as it is (base.toml) and with
// -maxrregcount=32 (new.toml).
// Each thread runs NACC independent FMA chains for `iters` steps: acc[k] = acc[k] * m + c_k with
// m = 1.0 at run time (the compiler keeps every FFMA; values stay exact integers below 2^24).
// All NACC accumulators are live across the step loop. Uncapped, ptxas keeps them in registers
// (about NACC + 8 registers, no spills) and the kernel is FMA-bound. Capped at 32 registers,
// about NACC - 24 accumulators live in local memory: every step reloads and re-stores them
// (local-memory traffic through L1), and the kernel becomes bound by spill loads and stores.
#ifndef NACC
#define NACC 40
#endif

extern "C" __global__ void fma_chains(float* y, const int* x, int n, int iters, float m,
                                       int nacc)
{
    if (nacc != NACC) return;  // the reference is told NACC through `nacc`; a mismatch fails
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = (float)x[i];
    float acc[NACC];
#pragma unroll
    for (int k = 0; k < NACC; ++k) acc[k] = v + (float)k;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < NACC; ++k) acc[k] = fmaf(acc[k], m, (float)((k & 3) + 1));
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < NACC; ++k) s += acc[k];
    y[i] = s;
}
