// CORPUS (held out) register_spills: __launch_bounds__(256, 8) lets ptxas use only 32 registers
// per thread, but a 24-tap filter keeps 24 coefficients and 8 running outputs live: values spill
// to local memory and are reloaded in the inner loop. Fix: relax the bounds (fewer blocks per SM)
// or keep the taps in shared/constant memory.
#define TAPS 24
#define OUTS 8
extern "C" __global__ void __launch_bounds__(256, 8) bounds_spill(float* y, const float* x,
                                                                  const float* taps, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const long long base = (long long)t * OUTS;
    if (base + OUTS > n) return;  // x holds n + TAPS values
    float c[TAPS];
#pragma unroll
    for (int k = 0; k < TAPS; ++k) c[k] = taps[(k * 7 + t) % TAPS];
    float acc[OUTS] = {};
    for (int rep = 0; rep < 8; ++rep) {
#pragma unroll
        for (int o = 0; o < OUTS; ++o)
#pragma unroll
            for (int k = 0; k < TAPS; ++k) acc[o] = fmaf(c[k], x[base + o + k], acc[o]);
#pragma unroll
        for (int k = 0; k < TAPS; ++k) c[k] = c[k] * 0.5f + acc[k % OUTS] * 1e-3f;
    }
#pragma unroll
    for (int o = 0; o < OUTS; ++o) y[base + o] = acc[o];
}
