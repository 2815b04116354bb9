// sgemm: C[M, N] = A[M, K] @ B[K, N], all fp32, row-major (KernelBench level-1 style).
// Deliberately naive: one thread per output element on a 2-D grid of 2-D blocks, the
// inner product read straight from global memory (no shared-memory tiling, no register
// blocking), accumulated in fp32 in k order.
extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;   // along N
    const int row = blockIdx.y * blockDim.y + threadIdx.y;   // along M
    if (row >= M || col >= N) return;

    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[(long long)row * K + k] * B[(long long)k * N + col];
    C[(long long)row * N + col] = acc;
}
