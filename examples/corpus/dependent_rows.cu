// CORPUS memory_latency: each warp walks a chain of 128-byte rows of a 256 MB table; the next
// row depends on the value just loaded, so each warp has one coalesced load in flight. Few
// registers, full occupancy, coalesced access: still far too few bytes in flight to cover DRAM
// latency, so DRAM idles while warps wait. Fix: walk several independent chains per warp.
extern "C" __global__ void dependent_rows(int* y, const int* table, int n, int rows_mask,
                                          int steps)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    long long p = ((long long)(i >> 5) * 40503) & rows_mask;
    int acc = lane;
    for (int s = 0; s < steps; ++s) {
        const int v = table[p * 32 + lane];
        acc = acc * 31 + v;
        const int head = __shfl_sync(0xffffffffu, v, 0);
        p = (p * 1103515245LL + head + 12345) & rows_mask;
    }
    if (i < n) y[i] = acc;
}
