// PLANTED: occupancy_registers.
// Each warp walks a pseudo-random chain of 128-byte rows of `table` [rows, 32] (int32): at every
// step lane l loads table[p][l] (one coalesced 128-byte request per warp), and the next row p
// depends on the value lane 0 just loaded (a shuffle), so a warp has ONE load in flight at a
// time and every step waits for a full L2/DRAM round trip: the kernel is latency-bound and its
// speed is proportional to the number of warps resident per SM.
// Each thread folds step s into accumulator acc[s % NACC]; with the step loop unrolled by NACC
// all NACC (128) accumulators live in registers for the whole kernel: ptxas (nvcc 13.0, sm_90)
// allocates 168 registers per thread with no spills, which caps the SM at 12 resident warps
// (18.75% occupancy; 3 blocks of 128). Shared memory and block-count limits are far looser.
// Fewer live registers (folding into a few accumulators) would let ~5x more warps, hence
// independent chains, run per SM.
// No __launch_bounds__: the register count is exactly what the code asks for.
#ifndef NACC
#define NACC 128
#endif

extern "C" __global__ void register_pressure(unsigned* out, const int* table, int n,
                                             int rows_mask, int steps, int nacc)
{
    if (nacc != NACC) return;  // the reference is told NACC through `nacc`; a mismatch fails
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    const unsigned warp = (unsigned)t >> 5;
    unsigned p = (warp * 40503u) & (unsigned)rows_mask;
    unsigned acc[NACC];
#pragma unroll
    for (int k = 0; k < NACC; ++k) acc[k] = (unsigned)(lane + k);

    for (int s = 0; s < steps; s += NACC) {  // steps is a multiple of NACC
#pragma unroll
        for (int k = 0; k < NACC; ++k) {
            const int v = table[(long long)p * 32 + lane];               // dependent load
            acc[k] = acc[k] * 31u + (unsigned)v;
            const unsigned v0 = (unsigned)__shfl_sync(0xffffffffu, v, 0);
            p = (p * 1103515245u + v0 + 12345u) & (unsigned)rows_mask;  // next row needs v0
        }
    }
    unsigned h = 0;
#pragma unroll
    for (int k = 0; k < NACC; ++k) h ^= acc[k] * (2u * k + 1u);
    if (t < n) out[t] = h & 0x0fffffffu;  // < 2^28: can never equal the harness's poison value
}
