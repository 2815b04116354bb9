// log_softmax_rows: out[r, j] = x[r, j] - max - log(sum exp(x[r, :] - max)).
// One block per row: thread 0 finds the row's max and log-sum, the block writes the row.
extern "C" __global__ void log_softmax_rows(const float* x, float* out, int N, int C)
{
    __shared__ float row_max, row_lse;
    const float* xr = x + (size_t)blockIdx.x * C;
    float* o = out + (size_t)blockIdx.x * C;
    if (threadIdx.x == 0) {
        float m = xr[0];
        for (int j = 1; j < C; j++) {
            m = max(m, xr[j]);
        }
        float s = 0.0f;
        for (int j = 0; j < C; j++) {
            s += expf(xr[j] - m);
        }
        row_max = m;
        row_lse = logf(s);
    }
    __syncthreads();
    for (int j = threadIdx.x; j < C; j += blockDim.x) {
        o[j] = xr[j] - row_max - row_lse;
    }
}
