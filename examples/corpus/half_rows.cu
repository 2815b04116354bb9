// CORPUS (held out) memory_latency: each half-warp walks its own chain of 64-byte rows of a
// 256 MB table, the next row chosen by the value just read: two coalesced 64-byte loads in flight
// per warp, few registers, full occupancy, and DRAM mostly idle while warps wait on latency.
extern "C" __global__ void half_rows(int* y, const int* table, int n, int rows_mask, int steps)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 15;
    const unsigned long long mask = (unsigned long long)rows_mask;
    unsigned long long p = ((unsigned long long)(i >> 4) * 2654435761ULL) & mask;
    int acc = lane;
    for (int s = 0; s < steps; ++s) {
        const int v = table[p * 16 + lane];
        acc ^= v + s;
        const int head = __shfl_sync(0xffffffffu, v, 0, 16);
        p = (p * 6364136223846793005ULL + (unsigned)head) & mask;
    }
    if (i < n) y[i] = acc;
}
