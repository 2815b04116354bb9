// atx_columns: y = A^T x for a tall row-major A [M, N]; thread j owns column j and walks down
// the rows, so a warp reads 32 neighbouring floats of each row.
extern "C" __global__ void atx_columns(const float* __restrict__ A, const float* __restrict__ x,
                                       float* __restrict__ y, int M, int N)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < N) {
        const float* col = A + j;
        float acc = 0.0f;
        for (int i = 0; i < M; ++i, col += N)
            acc += (*col) * x[i];
        y[j] = acc;
    }
}
