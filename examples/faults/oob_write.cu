// PLANTED FAULT (oob_write): y[i] = 2 * x[i] + 1 (fp32) is correct for i < n, but the
// bound check is i <= n, so thread n writes y[n] = 0, one element past the end of y.
// (x[n] is not read, so the only out-of-bounds access is the write.)
extern "C" __global__ void oob_write(const float* x, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)                                    // BUG: should be i < n
        y[i] = (i < n) ? 2.0f * x[i] + 1.0f : 0.0f;
}
