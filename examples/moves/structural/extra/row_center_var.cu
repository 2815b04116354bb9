// row_center_var: var[r] = mean_j (x[r, j] - mean_j x[r, :])^2, two passes over the row.
// One 128-thread block per row; one shared array serves both sums' trees.
#define BLOCK 128

extern "C" __global__ void row_center_var(const float* x, float* var, int n_rows, int n_cols)
{
    __shared__ float acc[BLOCK];
    int tid = threadIdx.x;
    const float* row = x + (long long)blockIdx.x * n_cols;

    float sum = 0.0f;
    for (int k = tid; k < n_cols; k += BLOCK) {
        sum += row[k];
    }
    acc[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x >> 1; s > 0; s = s >> 1) {
        if (tid < s) {
            acc[tid] += acc[tid + s];
        }
        __syncthreads();
    }
    const float mean = acc[0] / n_cols;
    __syncthreads();

    float dev = 0.0f;
    for (int k = tid; k < n_cols; k += BLOCK) {
        const float d = row[k] - mean;
        dev += d * d;
    }
    acc[tid] = dev;
    __syncthreads();
    for (int s = blockDim.x >> 1; s > 0; s >>= 1) {
        if (tid < s) {
            acc[tid] += acc[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        var[blockIdx.x] = acc[0] / n_cols;
    }
}
