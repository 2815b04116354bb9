// ger_rank1: the rank-one update A [M, N] += alpha * u [M] v [N]^T, fp32, row-major, in place.
// Thread indices named up front; the x dimension walks the rows, so a warp's lanes update 32
// rows at once, N floats apart.
extern "C" __global__ void ger_rank1(float* A, const float* u, const float* v, float alpha,
                                     unsigned M, unsigned N)
{
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const unsigned i = blockIdx.x * blockDim.x + tx;
    const unsigned j = blockIdx.y * blockDim.y + ty;
    if (i >= M || j >= N)
        return;
    const size_t at = (size_t)i * N + j;
    A[at] = A[at] + alpha * u[i] * v[j];
}
