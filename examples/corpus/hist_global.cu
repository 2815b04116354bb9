// CORPUS (second hold-out) atomic_contention: a 4-bin histogram of 16M keys built with one
// global atomicAdd per element: all warps of the GPU update four words of one sector.
extern "C" __global__ void hist_global(unsigned* bins, const unsigned* keys, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[keys[i] & 3u], 1u);
}
