// LayerNorm forward, one warp per row (the layout of popular GPT-2 training code): the warp
// walks its row three times (mean, variance, normalize), lanes striding by 32.
extern "C" __global__ void warp_layernorm(float* out, float* mean_out, float* rstd_out,
                                          const float* inp, const float* weight,
                                          const float* bias, int N, int C)
{
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const int row = blockIdx.x * (blockDim.x / 32) + warp;
    if (row >= N) return;
    const float* x = inp + (long long)row * C;
    float sum = 0.0f;
    for (int i = lane; i < C; i += 32) sum += x[i];
    for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffff, sum, o);
    const float m = sum / C;
    float sq = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float d = x[i] - m;
        sq += d * d;
    }
    for (int o = 16; o > 0; o /= 2) sq += __shfl_xor_sync(0xffffffff, sq, o);
    const float s = rsqrtf(sq / C + 1e-5f);
    float* o = out + (long long)row * C;
    for (int i = lane; i < C; i += 32) o[i] = s * (x[i] - m) * weight[i] + bias[i];
    if (lane == 0) {
        mean_out[row] = m;
        rstd_out[row] = s;
    }
}
