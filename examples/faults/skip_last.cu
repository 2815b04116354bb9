// PLANTED FAULT (skip_last): meant to compute y[i] = 2 * x[i] + 1 (fp32), but the bound
// is n - 1, so y[n - 1] is never written.
extern "C" __global__ void skip_last(const float* x, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) y[i] = 2.0f * x[i] + 1.0f;   // BUG: should be i < n
}
