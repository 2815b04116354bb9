// nchw_to_nhwc_half: out[n, p, c] = x[n, c, p] for a batch of fp16 feature maps of HW pixels,
// the layout change in front of a channels-last convolution. One thread per (pixel, channel) of
// one image (blockIdx.z), adjacent threads at adjacent pixels: the reads are coalesced, the
// writes C halves apart.
#include <cuda_fp16.h>

extern "C" __global__ void nchw_to_nhwc_half(const __half* x, __half* out, int C, int HW)
{
    const int img = blockIdx.z;
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    const int ch = blockIdx.y * blockDim.y + threadIdx.y;
    if (p < HW && ch < C) {
        const __half* src = x + (long long)img * C * HW;
        __half* dst = out + (long long)img * HW * C;
        const long long from = (long long)ch * HW + p;
        dst[(long long)p * C + ch] = src[from];
    }
}
