// CORPUS (held out) warp_divergence: each thread iterates a number of times read from its input
// (0..511): a warp runs as long as its slowest lane while lanes that finished idle, so on
// average about half the lanes of each issued instruction do work.
extern "C" __global__ void data_dep_loop(float* y, const int* counts, int n, float m)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int c = counts[i];
    float a = 1.0f, b = 2.0f;
    for (int it = 0; it < c; ++it) { a = fmaf(a, m, 1.0f); b = fmaf(b, m, a); }
    y[i] = a + b;
}
