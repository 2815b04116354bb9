// tanh_gate: out = tanh(a) * sigmoid(g), the gated tanh unit, for a and g [R, C] fp32;
// one thread per row (token) walking its channels.
extern "C" __global__ void tanh_gate(const float* a, const float* g, float* out, int R, int C)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < R) {
        const float* arow = a + (long long)row * C;
        const float* grow = g + (long long)row * C;
        float* orow = out + (long long)row * C;
        for (int c = 0; c < C; c++) {
            float gate = 1.0f / (1.0f + expf(-grow[c]));
            orow[c] = tanhf(arow[c]) * gate;
        }
    }
}
