// y[r] = sum_k A[r, k] * x[k] for a row-major A [R, K]. Each block stages a 32 x 32 tile of A in
// shared memory with coalesced loads, then thread t sums its own row of the tile.
#define TILE 32
extern "C" __global__ void tiled_matvec(float* y, const float* A, const float* x, int R, int K)
{
    __shared__ float tile[TILE][TILE];
    const int row0 = blockIdx.x * TILE;
    const int t = threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        for (int r = 0; r < TILE; ++r) {
            int row = row0 + r, col = k0 + t;
            tile[r][t] = (row < R && col < K) ? A[(long long)row * K + col] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            int col = k0 + k;
            if (col < K) acc += tile[t][k] * x[col];
        }
        __syncthreads();
    }
    if (row0 + t < R) y[row0 + t] = acc;
}
