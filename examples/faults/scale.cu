// scale: y[i] = 2 * x[i] + 1 (fp32). Correct; the baseline for the planted faults.
extern "C" __global__ void scale(const float* x, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
