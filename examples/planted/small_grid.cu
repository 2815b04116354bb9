// PLANTED: small_grid.
// y[i] = float(x[i]) pushed through `iters` dependent FMAs (v = v * m + 1, m = 1.0 at run time
// so values stay exact integers). The work itself is plain and well-formed; the plant is the
// launch: grid = NBLK blocks (16 by default) with a grid-stride loop, so only 16 of the H200's
// 132 SMs ever receive a block and the other 116 idle for the whole run
// (launch__grid_size 16 < 132 SMs; sm__cycles_active.avg ~ 12% of elapsed). On the busy SMs
// 8 warps run one dependent chain each, so no pipe saturates there either.
// The fix is a grid of at least one full wave (>= 132 * blocks-per-SM blocks).
extern "C" __global__ void small_grid(float* y, const int* x, int n, int iters, float m)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = (float)x[i];
        for (int it = 0; it < iters; ++it) v = fmaf(v, m, 1.0f);  // dependent chain
        y[i] = v;
    }
}
