// CORPUS (held out) launch_overhead: y = a x in fp16 over 100K elements: a few microseconds in
// all, mostly launch and ramp-up.
#include <cuda_fp16.h>
extern "C" __global__ void tiny_scale(half* y, const half* x, float a, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2half(a * __half2float(x[i]));
}
