// walk_features: each warp follows a chain of 128-byte records through a large table (the next
// record is named by what lane 0 just read); each lane scores the walk with 64 running feature
// weights that it updates at every step (an online learner per lane).
#define NF 64

extern "C" __global__ void walk_features(float* score, const float* table, const float* w0,
                                         int n, int rows_mask, int steps)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    unsigned p = ((unsigned)(i >> 5) * 2654435761u) & (unsigned)rows_mask;
    float feat[NF];
#pragma unroll
    for (int k = 0; k < NF; ++k) feat[k] = w0[k * 32 + lane];
    float total = 0.0f;
    for (int s = 0; s < steps; ++s) {
        const float v = table[(long long)p * 32 + lane];
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < NF; ++k) {
            acc += feat[k] * v;
            feat[k] = feat[k] * 0.999f + acc * 1e-3f;
        }
        total += acc;
        const unsigned head = __float_as_uint(__shfl_sync(0xffffffffu, v, 0));
        p = (p * 1103515245u + head + 12345u) & (unsigned)rows_mask;
    }
    if (i < n) score[i] = total;
}
