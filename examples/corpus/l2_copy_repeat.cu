// CORPUS (held out) l2_bandwidth: y = x + r over a 12 MB array, repeated `reps` times inside the
// kernel with a grid-stride loop: after the first repetition both the reads and the writes stay
// in L2, so L2 throughput is the limit and DRAM does little.
extern "C" __global__ void l2_copy_repeat(float* y, const float* x, int n, int reps)
{
    const int stride = gridDim.x * blockDim.x;
    for (int r = 0; r < reps; ++r)
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
            y[i] = x[i] + (float)r;
}
