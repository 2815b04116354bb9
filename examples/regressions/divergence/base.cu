// REGRESSION PAIR divergence, BASE: y[i] = sum of 4 FMA chains started at x[i], x[i]+1, ...,
// each run `iters` steps of v = v * m + 1 (m = 1.0 at run time, so the compiler keeps every FFMA
// and every value stays an exact integer below 2^24): y = 4 x + 6 + 4 iters. Every lane of a
// warp runs the same loop: 32 active threads per instruction, the FMA pipe does the work.
extern "C" __global__ void chains(float* y, const int* x, int n, int iters, float m)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = (float)x[i];
    float a = v, b = v + 1.0f, c = v + 2.0f, d = v + 3.0f;
    for (int it = 0; it < iters; ++it) {
        a = fmaf(a, m, 1.0f); b = fmaf(b, m, 1.0f); c = fmaf(c, m, 1.0f); d = fmaf(d, m, 1.0f);
    }
    y[i] = a + b + c + d;
}
