// CORPUS shared_bank_conflicts: the textbook tiled transpose without padding.
// Rows of a 32x32 fp32 tile are written to shared memory (conflict-free) and read back by column:
// lane b reads tile[b][k], 32 words 128 bytes apart in one bank -> a 32-way conflict on every
// shared load. Global reads and writes are both coalesced. Fix: float tile[32][33].
#define TILE 32
#define ROWS 8
extern "C" __global__ void smem_transpose(float* out, const float* in, int N)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < N && y + j < N) tile[threadIdx.y + j][threadIdx.x] = in[(long long)(y + j) * N + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < N && y + j < N) out[(long long)(y + j) * N + x] = tile[threadIdx.x][threadIdx.y + j];
}
