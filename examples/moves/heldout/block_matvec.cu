// block_matvec: y[b] = A[b] @ v[b] for a batch of 32x32 matrices; each block stages one matrix
// in shared memory (coalesced), then thread t computes row t's dot product.
#define DIM 32

extern "C" __global__ void block_matvec(const float* A, const float* v, float* y, int B)
{
    __shared__ float a[DIM][DIM];
    __shared__ float vs[DIM];
    const long long b = blockIdx.x;
    const int t = threadIdx.x;  // blockDim.x == DIM
    if (b >= B) return;
    for (int r = 0; r < DIM; ++r) a[r][t] = A[(b * DIM + r) * DIM + t];
    vs[t] = v[b * DIM + t];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < DIM; ++k) acc += a[t][k] * vs[k];
    y[b * DIM + t] = acc;
}
