// maxpool_tokens: max pooling over the tokens of x [B, T, C] fp32: vmax[b, c] = max over t of
// x[b, t, c] and arg[b, c] = the first t where it occurs. One thread per (batch, channel),
// walking down the tokens.
#include <cfloat>

extern "C" __global__ void maxpool_tokens(const float* x, float* vmax, int* arg, int B, int T, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y;
    if (c < C) {
        const float* col = x + (long long)b * T * C + c;
        float best = -FLT_MAX;
        int where = 0;
        for (int t = 0; t < T; ++t) {
            float v = col[(long long)t * C];
            if (v > best) {
                best = v;
                where = t;
            }
        }
        vmax[b * C + c] = best;
        arg[b * C + c] = where;
    }
}
