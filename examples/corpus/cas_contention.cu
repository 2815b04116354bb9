// CORPUS (held out) atomic_contention: every thread folds its value into one of four global
// maxima with an atomicCAS retry loop: all warps of the GPU contend for four words, each failed
// CAS is another round trip to the same L2 slice, and the rest of the memory system idles.
extern "C" __global__ void cas_contention(int* best, const int* x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int v = x[i];
    int* slot = best + (i & 3);
    int old = *slot;
    while (v > old) {
        const int seen = atomicCAS(slot, old, v);
        if (seen == old) break;
        old = seen;
    }
}
