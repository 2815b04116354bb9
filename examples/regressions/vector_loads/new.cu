// REGRESSION PAIR vector_loads, NEW: the same y = 2x + 1, EPT elements per thread, rewritten
// with scalar 2-byte loads and stores, one element at a time. Without __restrict__ the compiler
// cannot move the next load above the previous store (y may alias x), so each thread has one
// 2-byte load in flight instead of 32 bytes: the kernel waits on memory latency (long-scoreboard
// stalls) and DRAM throughput drops far below the roofline. Accesses stay coalesced.
#include <cuda_fp16.h>

#ifndef EPT
#define EPT 16
#endif

extern "C" __global__ void scale_fp16(__half* y, const __half* x, int n)
{
    const int base = blockIdx.x * blockDim.x * EPT + threadIdx.x;
    for (int u = 0; u < EPT; ++u) {
        const int i = base + u * blockDim.x;
        if (i < n) y[i] = __float2half_rn(fmaf(2.0f, __half2float(x[i]), 1.0f));
    }
}
