// CORPUS (held out) compute_fma, healthy: each thread evaluates a polynomial by Horner's rule at
// four independent points (four FMA chains), the four coefficients of each unrolled step held in
// registers: nearly every instruction is an FFMA, and the FMA pipe runs near its peak. Inputs
// stay in (-1, 1) so the values stay bounded.
extern "C" __global__ void poly_horner(float* y, const float* x, const float* coef, int n,
                                       int degree)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (4 * i + 3 >= n) return;
    const float c0 = coef[0], c1 = coef[1], c2 = coef[2], c3 = coef[3];
    const float p0 = x[4 * i], p1 = x[4 * i + 1], p2 = x[4 * i + 2], p3 = x[4 * i + 3];
    float r0 = c0, r1 = c1, r2 = c2, r3 = c3;
    for (int d = 0; d < degree; d += 4) {
        r0 = fmaf(r0, p0, c0); r1 = fmaf(r1, p1, c0); r2 = fmaf(r2, p2, c0); r3 = fmaf(r3, p3, c0);
        r0 = fmaf(r0, p0, c1); r1 = fmaf(r1, p1, c1); r2 = fmaf(r2, p2, c1); r3 = fmaf(r3, p3, c1);
        r0 = fmaf(r0, p0, c2); r1 = fmaf(r1, p1, c2); r2 = fmaf(r2, p2, c2); r3 = fmaf(r3, p3, c2);
        r0 = fmaf(r0, p0, c3); r1 = fmaf(r1, p1, c3); r2 = fmaf(r2, p2, c3); r3 = fmaf(r3, p3, c3);
    }
    y[4 * i] = r0; y[4 * i + 1] = r1; y[4 * i + 2] = r2; y[4 * i + 3] = r3;
}
