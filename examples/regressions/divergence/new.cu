// REGRESSION PAIR divergence, NEW: the same result, with an added "fast path": elements whose
// input is even take two steps per iteration (v = v * m + 2, iters / 2 times; iters is even).
// The branch depends on the data, and random inputs put odd and even values in every warp, so
// each warp runs BOTH loops one after the other with about half of its lanes active:
// iters + iters / 2 loop bodies instead of iters, at ~16 of 32 active threads per instruction.
extern "C" __global__ void chains(float* y, const int* x, int n, int iters, float m)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int xi = x[i];
    const float v = (float)xi;
    float a = v, b = v + 1.0f, c = v + 2.0f, d = v + 3.0f;
    if (xi & 1) {  // odd input: one step at a time
        for (int it = 0; it < iters; ++it) {
            a = fmaf(a, m, 1.0f); b = fmaf(b, m, 1.0f); c = fmaf(c, m, 1.0f); d = fmaf(d, m, 1.0f);
        }
    } else {       // even input: two steps at a time (diverges from its odd neighbours)
        for (int it = 0; it < iters; it += 2) {
            a = fmaf(a, m, 2.0f); b = fmaf(b, m, 2.0f); c = fmaf(c, m, 2.0f); d = fmaf(d, m, 2.0f);
        }
    }
    y[i] = a + b + c + d;
}
