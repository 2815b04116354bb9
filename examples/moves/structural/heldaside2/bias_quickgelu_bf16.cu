// bias_quickgelu_bf16: y = v * sigmoid(1.702 v) with v = x + bias[column], the "quick GELU" of
// CLIP-style MLPs after the first projection's bias, in bf16; one thread per element.
#include <cuda_bf16.h>

extern "C" __global__ void bias_quickgelu_bf16(const __nv_bfloat16* x, const __nv_bfloat16* bias,
                                               __nv_bfloat16* y, int R, int C)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= R * C)
        return;
    int col = idx % C;
    float v = __bfloat162float(x[idx]) + __bfloat162float(bias[col]);
    float sig = 1.0f / (1.0f + expf(-1.702f * v));
    y[idx] = __float2bfloat16(v * sig);
}
