// Euclidean norm of every column of a tall row-major matrix, e.g. to rescale the columns of a
// design matrix to unit length before a least-squares fit. One thread per column walks down
// all the rows; neighbouring threads read neighbouring columns, so the loads coalesce.
extern "C" __global__ void col_l2norm(float* norms, const float* X, int nrows, int ncols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < ncols) {
        float ss = 0.0f;
        for (int r = 0; r < nrows; r++) {
            float v = X[(size_t)r * ncols + col];
            ss += v * v;
        }
        norms[col] = sqrtf(ss);
    }
}
