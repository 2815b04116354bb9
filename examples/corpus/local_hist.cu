// CORPUS (held out) local_memory: each thread keeps a 16-bin histogram int h[16] of the bytes it
// reads and increments h[b & 15]: a run-time index, so the array lives on the stack (local
// memory) although nothing spills. Fix: a shared-memory histogram per block, or bins kept in
// registers with compile-time indexing.
extern "C" __global__ void local_hist(int* out, const unsigned* x, int n, int words)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int h[16];
#pragma unroll
    for (int b = 0; b < 16; ++b) h[b] = 0;
    const unsigned* row = x + (long long)i * words;
    for (int w = 0; w < words; ++w) {
        const unsigned v = row[w];
        h[v & 15]++; h[(v >> 8) & 15]++; h[(v >> 16) & 15]++; h[(v >> 24) & 15]++;
    }
    int best = 0;
#pragma unroll
    for (int b = 1; b < 16; ++b) best = h[b] > h[best] ? b : best;
    out[i] = best * 1000 + h[best];
}
