// CORPUS (held out) compute_sfu: four dependent chains per thread of v = rsqrt(v * v + c): one
// MUFU.RSQ (XU pipe, 16 lanes per SM per cycle) per two FMA-pipe instructions, a large grid and
// no memory traffic to speak of: the XU pipe is the limit.
extern "C" __global__ void rsqrt_chain(float* y, const float* x, int n, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = a + 0.25f, c = a + 0.5f, d = a + 0.75f;
    for (int it = 0; it < iters; ++it) {
        a = rsqrtf(fmaf(a, a, 0.5f)); b = rsqrtf(fmaf(b, b, 0.5f));
        c = rsqrtf(fmaf(c, c, 0.5f)); d = rsqrtf(fmaf(d, d, 0.5f));
    }
    y[i] = a + b + c + d;
}
