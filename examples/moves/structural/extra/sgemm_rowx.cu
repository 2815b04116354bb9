// sgemm_rowx: C [M, N] = A [M, K] @ B [K, N], fp32, row-major, one thread per output. The
// thread's x index picks the row and its y index the column, so the 32 lanes of a warp hold
// 32 different rows: each load of A is 32 rows K floats apart, each store of C 32 rows N floats
// apart, and every lane reads the same element of B.
extern "C" __global__ void sgemm_rowx(const float* A, const float* B, float* C, int M, int N,
                                      int K)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; ++k) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}
