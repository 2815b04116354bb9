// col_l2_blocks: norms[c] = sqrt(sum_r x[r, c]^2), the column norms of x [rows, cols]. One block
// per column: its 256 threads step down the rows through a pointer to the column, then a
// shared-memory tree adds their sums.
extern "C" __global__ void col_l2_blocks(const float* x, float* norms, int rows, int cols)
{
    __shared__ float sh[256];
    const int col = (int)blockIdx.x;
    const float* p = x + col;
    float ss = 0.f;
    for (int r = threadIdx.x; r < rows; r += 256) {
        const float v = p[(long long)r * cols];
        ss += v * v;
    }
    sh[threadIdx.x] = ss;
    __syncthreads();
    for (int s = 128; s > 0; s /= 2) {
        if (threadIdx.x < s)
            sh[threadIdx.x] = sh[threadIdx.x] + sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        norms[col] = sqrtf(sh[0]);
}
