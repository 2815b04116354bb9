// grad_mag_flat: the forward-difference gradient magnitude of an image x [H, W] (fp32,
// row-major), one thread per pixel of a 64-bit flat index split column-major (p % H the row,
// p / H the column): adjacent threads are a row apart.
#include <math.h>

extern "C" __global__ void grad_mag_flat(const float* __restrict__ x, float* __restrict__ g,
                                         int H, int W)
{
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= (long long)H * W) return;
    const long long y = p % H;
    const long long xc = p / H;
    const float* line = x + y * W;
    const float here = line[xc];
    const float dx = (xc + 1 < W) ? line[xc + 1] - here : 0.0f;
    const float dy = (y + 1 < H) ? line[xc + W] - here : 0.0f;
    g[y * W + xc] = sqrtf(dx * dx + dy * dy);
}
