// channel_moments: per-channel mean and (biased) variance of an NHWC activation tensor viewed
// as x[P][C] (P = N*H*W pixels); one thread per channel walks down all P pixels.
extern "C" __global__ void channel_moments(const float* x, float* mean, float* var, int P, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;

    float sum = 0.f, sumsq = 0.f;
    for (size_t p = 0; p < (size_t)P; p++) {
        float v = x[p * C + c];
        sum += v;
        sumsq += v * v;
    }
    float m = sum / P;
    mean[c] = m;
    var[c] = sumsq / P - m * m;
}
