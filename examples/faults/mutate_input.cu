// PLANTED FAULT (mutate_input): y[i] = 2 * x[i] + 1 (fp32) is correct, but the kernel
// also overwrites its input: x[i] = y[i].
extern "C" __global__ void mutate_input(float* x, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = 2.0f * x[i] + 1.0f;
        y[i] = v;
        x[i] = v;                                  // BUG: inputs must not change
    }
}
