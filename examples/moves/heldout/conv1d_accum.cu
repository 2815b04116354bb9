// conv1d_accum: y[i] = sum_t w[t] * x[i + t] (a valid 1-D correlation with T taps), each
// output accumulated in place in y, one thread per output.
extern "C" __global__ void conv1d_accum(float* y, const float* x, const float* w, int n, int T)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = 0.0f;
    for (int t = 0; t < T; ++t) y[i] += w[t] * x[i + t];
}
