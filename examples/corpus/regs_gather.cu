// CORPUS (held out) occupancy_registers: the dependent row walk of dependent_rows, but each lane
// also keeps 96 accumulators live (fully unrolled, no spills): ~130 registers per thread cap
// residency at 3-4 blocks of 128 threads per SM, so even fewer rows are in flight per SM and the
// walk waits on DRAM latency. Fix: fewer live values (or a register cap that does not spill).
#define NACC 96
extern "C" __global__ void regs_gather(int* y, const int* table, int n, int rows_mask, int steps)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    long long p = ((long long)(i >> 5) * 7919) & rows_mask;
    unsigned acc[NACC];
#pragma unroll
    for (int k = 0; k < NACC; ++k) acc[k] = lane + k;
    for (int s = 0; s < steps; s += NACC) {
#pragma unroll
        for (int k = 0; k < NACC; ++k) {
            const int v = table[p * 32 + lane];
            acc[k] = acc[k] * 31u + (unsigned)v;
            const int head = __shfl_sync(0xffffffffu, v, 0);
            p = (p * 1103515245LL + head + 12345) & rows_mask;
        }
    }
    unsigned h = 0;
#pragma unroll
    for (int k = 0; k < NACC; ++k) h ^= acc[k] * (2u * k + 1u);
    if (i < n) y[i] = (int)(h & 0x0FFFFFFFu);
}
