// feature_amax: symmetric int8 quantization scale per feature, scale[f] = max_b |x[b][f]| / 127
// over a batch x [B, F]; one thread per feature (1 where the column is all zeros).
extern "C" __global__ void feature_amax(const float* x, float* scale, int B, int F)
{
    long long f = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= F) return;

    float amax = 0.0f;
    long long idx = f;
    const long long end = (long long)B * F;
    while (idx < end) {
        amax = fmaxf(amax, fabsf(x[idx]));
        idx += F;
    }
    scale[f] = (amax > 0.0f) ? amax / 127.0f : 1.0f;
}
