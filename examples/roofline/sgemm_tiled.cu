// A tiled fp32 GEMM, C = A @ B (row-major, M x K times K x N), to measure against the FP32
// compute ceiling: 128 x 128 block tiles, a TM x TN register tile per thread (256 threads),
// K-slices of BK staged through shared memory. Knobs (see the spec):
//   INTERLEAVE  0: thread tc owns columns tc*TN .. tc*TN+TN-1 (threads 4 apart share a bank:
//               4-way conflicts on the B tile); 1: it owns columns tc, tc+16, ... (no conflicts)
//   BK          the K-slice staged per step (8 or 16)
// M, N must be multiples of 128 and K of BK.
#ifndef INTERLEAVE
#define INTERLEAVE 0
#endif
#ifndef BK
#define BK 8
#endif
#define BM 128
#define BN 128
#define TM 8
#define TN 8
#define THREADS 256

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_tiled(float* C, const float* A,
                                                                   const float* B, int M,
                                                                   int N, int K)
{
    __shared__ float As[BK][BM];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BM * BK; e += THREADS) {
            const int r = e / BK, c = e % BK;
            As[c][r] = A[(long long)(row0 + r) * K + k0 + c];
        }
        for (int e = tid; e < BK * BN; e += THREADS) {
            const int r = e / BN, c = e % BN;
            Bs[r][c] = B[(long long)(k0 + r) * N + col0 + c];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int m = 0; m < TM; ++m) a[m] = As[k][tr * TM + m];
#pragma unroll
            for (int n = 0; n < TN; ++n) b[n] = Bs[k][INTERLEAVE ? tc + n * (BN / TN) : tc * TN + n];
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
        for (int n = 0; n < TN; ++n) {
            const int col = INTERLEAVE ? tc + n * (BN / TN) : tc * TN + n;
            C[(long long)(row0 + tr * TM + m) * N + col0 + col] = acc[m][n];
        }
}
