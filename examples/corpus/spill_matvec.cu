// CORPUS (second hold-out) register_spills: a 48-element register vector multiplied by small
// matrices read from constant-indexed global memory, compiled with -maxrregcount=40 (the spec's
// flags): the vector does not fit, and the spilled part is reloaded every pass.
#define N 48
extern "C" __global__ void spill_matvec(float* y, const float* x, const float* w, int n,
                                        int passes)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v[N];
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = x[i] + 0.01f * k;
    for (int p = 0; p < passes; ++p) {
        const float a = w[p & 15], b = w[(p + 7) & 15];
#pragma unroll
        for (int k = 0; k < N; ++k) v[k] = fmaf(a, v[k], b * v[(k * 5 + 3) % N]);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < N; ++k) s += v[k];
    y[i] = s;
}
