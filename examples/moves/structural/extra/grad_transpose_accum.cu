// grad_transpose_accum: dw[n, m] += scale * g[m, n] for g [M, N] fp32, a gradient accumulated
// into the transposed weight it belongs to. One thread per element of g, adjacent threads along
// its rows: g is read coalesced, dw read and written M floats apart.
extern "C" __global__ void grad_transpose_accum(const float* g, float* dw, float scale, int M,
                                                int N)
{
    unsigned x = blockDim.x * blockIdx.x + threadIdx.x;  // column of g
    unsigned y = threadIdx.y + blockDim.y * blockIdx.y;  // row of g
    if (x >= (unsigned)N)
        return;
    if (y >= (unsigned)M)
        return;
    dw[(size_t)x * M + y] += scale * g[(size_t)y * N + x];
}
