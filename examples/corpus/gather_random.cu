// CORPUS uncoalesced_access (compound with DRAM traffic): y[i] = x[idx[i]] with random idx over a
// 256 MB table. Every warp-wide load of x touches 32 random sectors and uses 4 of their 32 bytes,
// so DRAM moves ~8x the bytes the kernel needs: DRAM looks busy, but most of what it moves is
// waste. Fix: sort or bucket the indices, or gather whole rows instead of single words.
extern "C" __global__ void gather_random(float* y, const float* x, const int* idx, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[idx[i]];
}
