// silu_mul: the SwiGLU gate of a gated MLP. x [R, 2C] holds the gate a = x[r, :C] and the up
// projection b = x[r, C:]; out[r, j] = silu(a) * b = a / (1 + exp(-a)) * b. One thread per
// output element.
extern "C" __global__ void silu_mul(const float* x, float* out, int R, int C)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (long long)R * C) {
        long long r = i / C;
        long long j = i - r * C;
        float a = x[r * 2 * C + j];
        float b = x[r * 2 * C + C + j];
        out[i] = a / (1.0f + expf(-a)) * b;
    }
}
