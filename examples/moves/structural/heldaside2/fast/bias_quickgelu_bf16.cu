// bias_quickgelu_bf16_fast: y = v * sigmoid(1.702 v) with v = x + bias[column], bf16.
// Hand-written fast version of ../bias_quickgelu_bf16.cu: 16-byte accesses of 8 bf16 (x, the
// bias and y), unpacked as four __nv_bfloat162 and computed in fp32, in a grid-stride loop over a
// capped grid; one 32-bit modulo per 8 elements. A row of C % 8 != 0 columns, or a pointer off
// a 16-byte boundary, takes the scalar grid-stride loop.
#include <cuda_bf16.h>
#include <stdint.h>

static __device__ __forceinline__ float quick_gelu(float v)
{
    return v / (1.0f + expf(-1.702f * v));
}

extern "C" __global__ void __launch_bounds__(256)
bias_quickgelu_bf16_fast(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ bias,
                         __nv_bfloat16* __restrict__ y, int R, int C)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(bias) |
                           reinterpret_cast<uintptr_t>(y);
    if ((C & 7) == 0 && (addr & 15) == 0) {
        const int c8 = C >> 3;          // 16-byte vectors per row: none crosses a row
        const int n8 = R * c8;
        const uint4* x8 = reinterpret_cast<const uint4*>(x);
        const uint4* b8 = reinterpret_cast<const uint4*>(bias);
        uint4* y8 = reinterpret_cast<uint4*>(y);
        for (int i = tid; i < n8; i += stride) {
            const uint4 xv = x8[i];
            const uint4 bv = __ldg(&b8[i % c8]);
            const __nv_bfloat162* xp = reinterpret_cast<const __nv_bfloat162*>(&xv);
            const __nv_bfloat162* bp = reinterpret_cast<const __nv_bfloat162*>(&bv);
            uint4 ov;
            __nv_bfloat162* op = reinterpret_cast<__nv_bfloat162*>(&ov);
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const float2 a = __bfloat1622float2(xp[k]);
                const float2 b = __bfloat1622float2(bp[k]);
                op[k] = __floats2bfloat162_rn(quick_gelu(a.x + b.x), quick_gelu(a.y + b.y));
            }
            y8[i] = ov;
        }
        return;
    }
    const int n = R * C;
    for (int i = tid; i < n; i += stride) {
        const float v = __bfloat162float(x[i]) + __bfloat162float(bias[i % C]);
        y[i] = __float2bfloat16(quick_gelu(v));
    }
}
