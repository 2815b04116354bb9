// CORPUS (second hold-out) compute_sfu: three chains per thread of v = __sinf(v) * __cosf(v + c):
// two MUFU instructions per FMA, a large grid, no memory traffic: the XU pipe is the limit.
extern "C" __global__ void sincos_chain(float* y, const float* x, int n, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = a + 0.3f, c = a + 0.6f;
    for (int it = 0; it < iters; ++it) {
        a = __sinf(a) * __cosf(a + 0.1f);
        b = __sinf(b) * __cosf(b + 0.2f);
        c = __sinf(c) * __cosf(c + 0.3f);
    }
    y[i] = a + b + c;
}
