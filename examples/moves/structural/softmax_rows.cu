// softmax_rows: out[r, :] = softmax(x[r, :]), one thread per row: the running max, then exp
// written to out and summed, then out normalized in place.
extern "C" __global__ void softmax_rows(const float* x, float* out, int N, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    const float* xr = x + (long long)r * C;
    float* o = out + (long long)r * C;
    float m = -INFINITY;
    for (int j = 0; j < C; ++j) {
        m = fmaxf(m, xr[j]);
    }
    float sum = 0.0f;
    for (int j = 0; j < C; ++j) {
        o[j] = expf(xr[j] - m);
        sum += o[j];
    }
    for (int j = 0; j < C; ++j) {
        o[j] /= sum;
    }
}
