// col_mean_var: mean[c] and (population) var[c] of each column of x [N, C], the per-channel
// statistics of a batch norm. One thread per column: the mean over the rows, then the sum of
// squared deviations from it.
extern "C" __global__ void col_mean_var(const float* x, float* mean, float* var, int N, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) {
        float s = 0.0f;
        for (int r = 0; r < N; r++) {
            s += x[(long long)r * C + c];
        }
        float m = s / N;
        float q = 0.0f;
        for (int r = 0; r < N; r++) {
            float d = x[(long long)r * C + c] - m;
            q += d * d;
        }
        mean[c] = m;
        var[c] = q / N;
    }
}
