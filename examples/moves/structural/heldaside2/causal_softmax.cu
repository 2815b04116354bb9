// causal_softmax: attention probabilities under a causal mask. s [BH, T, T] fp32 holds raw
// scores (rows are queries); row i is query q = i % T, which sees keys 0..q:
// p[i, j] = exp(scale s[i, j] - m) / sum for j <= q, and 0 for j > q. One thread per row.
#include <cfloat>

extern "C" __global__ void causal_softmax(const float* s, float* p, int BH, int T, float scale)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < BH * T) {
        int q = i % T;
        const float* srow = s + (long long)i * T;
        float* prow = p + (long long)i * T;

        float m = -FLT_MAX;
        for (int j = 0; j <= q; ++j) {
            float v = srow[j] * scale;
            if (v > m)
                m = v;
        }
        float sum = 0.0f;
        for (int j = 0; j <= q; ++j) {
            float e = expf(srow[j] * scale - m);
            prow[j] = e;
            sum += e;
        }
        for (int j = 0; j < T; ++j) {
            if (j <= q)
                prow[j] = prow[j] / sum;
            else
                prow[j] = 0.0f;
        }
    }
}
