// rmsnorm_half: RMSNorm of fp16 rows with an fp16 weight, fp32 arithmetic:
// out[r, c] = x[r, c] / sqrt(mean_c(x[r, :]^2) + eps) * w[c]. One thread per row.
#include <cuda_fp16.h>

extern "C" __global__ void rmsnorm_half(const __half* x, const __half* w, __half* out,
                                        int N, int C, float eps)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;
    const __half* xr = x + (size_t)row * C;
    __half* o = out + (size_t)row * C;
    float ss = 0.0f;
    int j = 0;
    while (j < C) {
        float v = __half2float(xr[j]);
        ss += v * v;
        j++;
    }
    float inv = rsqrtf(ss / C + eps);
    j = 0;
    while (j < C) {
        o[j] = __float2half(__half2float(xr[j]) * inv * __half2float(w[j]));
        j++;
    }
}
