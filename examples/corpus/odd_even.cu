// CORPUS warp_divergence: lanes of a warp split by parity into two structurally different loops
// (a float FMA chain and an integer hash chain). The two paths run one after the other with 16 of
// 32 lanes active, so half of every issued instruction's lanes idle. Fix: split the work so a
// whole warp takes one path (e.g. by warp index instead of lane index).
extern "C" __global__ void odd_even(float* y, const int* x, int n, int iters, float m)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int v0 = x[i];
    if (threadIdx.x & 1) {
        float v = (float)v0;
        for (int it = 0; it < iters; ++it) v = fmaf(v, m, 1.0f);
        y[i] = v;
    } else {
        unsigned h = (unsigned)v0;
        for (int it = 0; it < iters; ++it) h = h * 1664525u + 1013904223u;
        y[i] = (float)(h >> 8);
    }
}
