// CORPUS compute_fp64: 8 independent double-precision FMA chains per thread on register data,
// a large grid, 16 bytes of memory traffic per thread: the FP64 pipe runs near its peak.
extern "C" __global__ void fp64_fma(double* y, const double* x, int n, int iters, double m)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = x[i] + k;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = fma(v[k], m, 1.0);
    }
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += v[k];
    y[i] = s;
}
