// tile_transpose: y[n, m] = x[m, n] for x [M, N] fp32, through a 32x32 shared-memory tile so
// that both the global reads and the global writes are coalesced.
#define TILE 32
#define ROWS 8  // blockDim.y: each thread moves TILE / ROWS elements

extern "C" __global__ void tile_transpose(const float* x, float* y, int M, int N)
{
    __shared__ float tile[TILE][TILE];
    const int n0 = blockIdx.x * TILE, m0 = blockIdx.y * TILE;
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
        const int m = m0 + j, n = n0 + threadIdx.x;
        if (m < M && n < N) tile[j][threadIdx.x] = x[(long long)m * N + n];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
        const int n = n0 + j, m = m0 + threadIdx.x;
        if (n < N && m < M) y[(long long)n * M + m] = tile[threadIdx.x][j];
    }
}
