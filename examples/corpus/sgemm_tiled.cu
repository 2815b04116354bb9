// CORPUS compute_fma (healthy, compute-bound): C = A @ B in fp32 with 128x128 block tiles, an 8x8
// register tile per thread (256 threads) and K-slices of 8 staged through shared memory. Each
// thread does 64 FFMAs per 16 shared loads (broadcast within rows/columns), so the FMA pipe is
// the busiest unit. M, N, K must be multiples of 128, 128, 8.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
extern "C" __global__ void __launch_bounds__(256) sgemm_tiled(float* C, const float* A,
                                                               const float* B, int M, int N, int K)
{
    __shared__ float As[BK][BM];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN);   // 16 x 16 threads
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BM * BK; e += 256) {          // A tile, stored transposed
            const int r = e / BK, c = e % BK;
            As[c][r] = A[(long long)(row0 + r) * K + k0 + c];
        }
        for (int e = tid; e < BK * BN; e += 256) {
            const int r = e / BN, c = e % BN;
            Bs[r][c] = B[(long long)(k0 + r) * N + col0 + c];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int m = 0; m < TM; ++m) a[m] = As[k][tr * TM + m];
#pragma unroll
            for (int n = 0; n < TN; ++n) b[n] = Bs[k][tc * TN + n];
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int n = 0; n < TN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n)
            C[(long long)(row0 + tr * TM + m) * N + col0 + tc * TN + n] = acc[m][n];
}
