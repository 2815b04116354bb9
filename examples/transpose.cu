// transpose: y[n, m] = x[m, n] for x [M, N] fp32, y [N, M].
// Deliberately naive: one thread per element, no shared-memory tiling; reads of x are
// coalesced but writes to y are strided by M floats (the classic uncoalesced transpose).
extern "C" __global__ void transpose(const float* x, float* y, int M, int N)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)M * N) return;
    const long long m = i / N;
    const long long n = i % N;
    y[n * M + m] = x[i];
}
