// PLANTED: uncoalesced_access.
// y[r] = sum_j x[r, j] for x [R, C] int32, one thread per ROW ("thread-per-row" reduction).
// At step j the 32 lanes of a warp read x[r..r+31, j]: 32 addresses C*4 bytes apart, so each
// warp-wide load touches 32 different 32-byte sectors (ideal for 4-byte loads: 4) and, with
// C*4 a multiple of 128 bytes, 32 lines in the same L1 data bank. Every sector is used in full
// over the next 7 iterations (the L1 keeps it), so DRAM traffic stays near the ideal R*C*4 bytes
// and DRAM is NOT the limit: the L1/LSU path, processing 32 sectors per request, is.
// The fix is a warp (or block) per row, reading coalesced, with a shuffle reduction.
extern "C" __global__ void uncoalesced(int* y, const int* x, int R, int C)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    const int* row = x + (long long)r * C;
    int acc = 0;
    for (int j = 0; j < C; ++j) acc += row[j];  // 4-byte loads, lanes C*4 bytes apart
    y[r] = acc;
}
