// CORPUS (held out) compute_fp64: double-precision Horner evaluation at two independent points
// per thread, four coefficients per unrolled step: DFMA on the FP64 pipe is nearly every
// instruction. Inputs stay in (-1, 1) so values stay bounded.
extern "C" __global__ void fp64_poly(double* y, const double* x, const double* coef, int n,
                                     int degree)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i + 1 >= n) return;
    const double c0 = coef[0], c1 = coef[1], c2 = coef[2], c3 = coef[3];
    const double p0 = x[2 * i], p1 = x[2 * i + 1];
    double r0 = c0, r1 = c1;
    for (int d = 0; d < degree; d += 4) {
        r0 = fma(r0, p0, c0); r1 = fma(r1, p1, c0);
        r0 = fma(r0, p0, c1); r1 = fma(r1, p1, c1);
        r0 = fma(r0, p0, c2); r1 = fma(r1, p1, c2);
        r0 = fma(r0, p0, c3); r1 = fma(r1, p1, c3);
    }
    y[2 * i] = r0; y[2 * i + 1] = r1;
}
