// PLANTED: shared_bank_conflicts.
// Per 32x32 tile T of x [M, N] (int32, zero-padded at the edges): Y_tile = T @ T^T, i.e.
// y[ti*32 + a, tj*32 + b] = sum_k T[a][k] * T[b][k].
// Global traffic is small (the tile is read once, the result written once) and coalesced.
// The tile sits in shared memory WITHOUT padding ([32][32] ints): lane b reads T[b][k], so the
// 32 lanes of a warp read 32 words 128 bytes apart, all in bank k -> a 32-way bank conflict on
// every one of these loads (32 wavefronts where 1 would do), 32 times per output. The T[a][k]
// loads are warp-uniform broadcasts. Shared-memory wavefronts outnumber everything else ~20:1.
// The fix is a padded tile ([32][33]) or a swizzled index.
#ifndef BLOCK_Y
#define BLOCK_Y 8
#endif
#define TILE 32

extern "C" __global__ void bank_conflicts(int* y, const int* x, int M, int N)
{
    __shared__ int tile[TILE][TILE];  // no padding: the planted bank conflicts
    const int lane = threadIdx.x;     // blockDim.x == 32
    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;

    for (int a = threadIdx.y; a < TILE; a += BLOCK_Y) {  // coalesced load, row-wise store
        const int r = r0 + a, c = c0 + lane;
        tile[a][lane] = (r < M && c < N) ? x[(long long)r * N + c] : 0;
    }
    __syncthreads();

    // volatile keeps every conflicting read a separate 4-byte LDS (no LDS.128 vectorization).
    const volatile int* mine = &tile[lane][0];
    for (int a = threadIdx.y; a < TILE; a += BLOCK_Y) {
        int acc = 0;
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += mine[k] * tile[a][k];  // 32-way conflict * broadcast
        const int r = r0 + a, c = c0 + lane;
        if (r < M && c < N) y[(long long)r * N + c] = acc;
    }
}
