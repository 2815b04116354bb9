// frames_wsum: out[c] = sum_k w[k] * frames[k, c], a weighted sum of K frames (temporal
// filtering), accumulated straight into the output, one thread per pixel.
extern "C" __global__ void frames_wsum(float* out, const float* frames, const float* w, int K,
                                       int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    out[c] = 0.0f;
    for (int k = 0; k < K; ++k)
        out[c] += w[k] * frames[(long long)k * C + c];
}
