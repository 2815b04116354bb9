// PLANTED FAULT (wrong_answer): should compute y[i] = 2 * x[i] + 1 (fp32) but adds 1.001.
extern "C" __global__ void wrong_answer(const float* x, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.001f;       // BUG: constant off by 1e-3
}
