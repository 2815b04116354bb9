// A compute-bound kernel whose launch decides how close it gets to the FP32 roofline: y = p(x)
// by Horner's rule, degree DEGREE, at every element, CHAINS elements per thread in flight at
// once, NBLK blocks of BLOCK threads in a grid-stride loop. With one block of 128 threads per
// SM and one chain per thread, each scheduler has one dependent FMA chain and the FMA pipe
// idles most cycles; with enough warps and chains it runs near its peak.
#ifndef CHAINS
#define CHAINS 1
#endif
extern "C" __global__ void poly_eval(float* y, const float* x, const float* coef, int n,
                                     int degree)
{
    const float c0 = coef[0], c1 = coef[1];
    const int stride = gridDim.x * blockDim.x * CHAINS;
    for (int base = (blockIdx.x * blockDim.x + threadIdx.x) * CHAINS; base < n; base += stride) {
        float p[CHAINS], r[CHAINS];
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) {
            p[c] = base + c < n ? x[base + c] : 0.0f;
            r[c] = c0;
        }
        for (int d = 0; d < degree; d += 2) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) r[c] = fmaf(fmaf(r[c], p[c], c1), p[c], c0);
        }
#pragma unroll
        for (int c = 0; c < CHAINS; ++c)
            if (base + c < n) y[base + c] = r[c];
    }
}
