// PLANTED: compute_sfu.
// Four independent chains per thread, each iterating v = __expf(0.5 * __sinf(v) + c_k), with
// c_k = 0.1 * x[i] - 1 - 0.05 * k. Every iteration is two MUFU instructions (MUFU.SIN and
// MUFU.EX2 on the XU pipe: 16 lanes per SM per clock, so 8 issue cycles per warp instruction)
// plus two or three FMA-pipe instructions, so the XU pipe saturates long before anything else:
// sm__inst_executed_pipe_xu near its peak, FMA pipe and memory low.
// With x in [-1, 1] the map is a contraction (v stays in (0.17, 0.68), |d/dv| <= 0.34), so
// the approximate intrinsics' errors (~1e-6) do not grow, and the result converges.
#define CHAINS 4

extern "C" __global__ void sfu_bound(float* y, const float* x, int n, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float base = 0.1f * x[i] - 1.0f;
    float v[CHAINS], c[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) { c[k] = base - 0.05f * k; v[k] = 0.5f; }
#pragma unroll 4
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < CHAINS; ++k) v[k] = __expf(fmaf(0.5f, __sinf(v[k]), c[k]));
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) s += v[k];
    y[i] = s;
}
