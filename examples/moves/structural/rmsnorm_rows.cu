// rmsnorm_rows: out[r, c] = x[r, c] / sqrt(mean_c(x[r, :]^2) + eps) * w[c].
// One 256-thread block per row; the sum of squares in double (for accuracy), combined in a
// shared-memory tree.
#define THREADS 256

extern "C" __global__ void rmsnorm_rows(const float* x, const float* w, float* out,
                                        int N, int C, float eps)
{
    __shared__ double part[THREADS];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    double ss = 0.0;
    for (int j = tid; j < C; j += blockDim.x) {
        double v = x[(long long)row * C + j];
        ss += v * v;
    }
    part[tid] = ss;
    __syncthreads();
    for (int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            part[tid] += part[tid + s];
        }
        __syncthreads();
    }
    float inv = (float)(1.0 / sqrt(part[0] / C + eps));
    for (int j = tid; j < C; j += blockDim.x) {
        out[(long long)row * C + j] = x[(long long)row * C + j] * inv * w[j];
    }
}
