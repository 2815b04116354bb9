// A tiled fp32 GEMM, C = A @ B (row-major, M x K times K x N), written to be searched: a large
// space (864 points, 574 of them runnable on sm_90) for tuning on many GPUs at once
// (docs/tuner.md, "Many GPUs and many hosts").
//   BM x BN   the block's tile of C, staged with BK-wide slices of A and B in shared memory
//   TM x TN   the register tile of C each thread computes: (BM / TM) * (BN / TN) threads
//   INTERLEAVE 0: thread tc owns columns tc*TN .. tc*TN+TN-1 of the tile; 1: columns tc,
//             tc + BN/TN, ... (no shared-memory bank conflicts on B)
// Every configuration adds each C element's products in the same order (k = 0, 1, ...), so all
// agree with the reference (this kernel at its defaults) to the last bit or nearly.
// M must be a multiple of BM, N of BN and K of BK.
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif
#ifndef INTERLEAVE
#define INTERLEAVE 0
#endif
#define THREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_space(float* C, const float* A,
                                                                  const float* B, int M,
                                                                  int N, int K)
{
    __shared__ float As[BK][BM];  // A's slice, transposed: a thread's TM rows are contiguous
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN);
    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BM * BK; e += THREADS) {
            const int r = e / BK, c = e % BK;
            As[c][r] = A[(row0 + r) * K + k0 + c];
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
            for (int n = 0; n < TN; ++n)
                b[n] = Bs[k][INTERLEAVE ? tc + n * (BN / TN) : tc * TN + n];
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
            C[(row0 + tr * TM + m) * N + col0 + col] = acc[m][n];
        }
}
