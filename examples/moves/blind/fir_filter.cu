// Direct-form FIR filter: y[i] = sum_t h[t] * x[i + t], x padded by taps - 1 samples.
extern "C" __global__ void fir_filter(float* y, const float* x, const float* h, int n, int taps)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int t = 0; t < taps; ++t) acc += h[t] * x[i + t];
    y[i] = acc;
}
