// masked_bias_scale: the "apply" half of dropout after a bias add, as a training framework runs
// it: out[r, c] = mask[r, c] ? (x[r, c] + bias[c]) * scale : 0 (fp16 in and out, fp32 math),
// and kept[r] += the number of elements of row r the mask kept.
// Eight arguments of six types: the example of docs/own-kernel.md, drafted by `pragma-ncu init`.
// Deliberately naive: one thread per element, one atomicAdd per kept element (every thread of a
// row contends for the same counter), scalar 2-byte loads and stores.
#include <cuda_fp16.h>
#include <stdint.h>

#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
masked_bias_scale(__half* __restrict__ out, int* __restrict__ kept,
                  const __half* __restrict__ x, const float* __restrict__ bias,
                  const uint8_t* __restrict__ mask, float scale, int rows, int cols)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)rows * cols) return;
    const int r = (int)(i / cols);
    const int c = (int)(i % cols);
    if (mask[i]) {
        out[i] = __float2half_rn((__half2float(x[i]) + bias[c]) * scale);
        atomicAdd(&kept[r], 1);
    } else {
        out[i] = __float2half_rn(0.0f);
    }
}
