// CORPUS (second hold-out) occupancy_registers: each warp walks a dependent chain of 128-byte rows
// while keeping 120 values live in registers (no spills): residency is capped by registers and
// far too few rows are in flight per SM.
#define NV 120
extern "C" __global__ void regs_chase(unsigned* y, const unsigned* table, int n, int rows_mask,
                                      int rounds)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    unsigned p = ((unsigned)(i >> 5) * 2654435761u) & (unsigned)rows_mask;
    unsigned v[NV];
#pragma unroll
    for (int k = 0; k < NV; ++k) v[k] = lane * 3u + k;
    for (int r = 0; r < rounds; ++r) {
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            const unsigned e = table[(long long)p * 32 + lane];
            v[k] = v[k] * 33u ^ e;
            p = (p * 1664525u + __shfl_sync(0xffffffffu, e, 0)) & (unsigned)rows_mask;
        }
    }
    unsigned h = 0;
#pragma unroll
    for (int k = 0; k < NV; ++k) h += v[k] * (k | 1u);
    if (i < n) y[i] = h;
}
