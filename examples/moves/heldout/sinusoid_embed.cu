// sinusoid_embed: the sinusoidal position embedding table, out[p, d] = sin(p * f(d)) for even d
// and cos(p * f(d)) for odd d, with f(d) = 10000^(-2 floor(d / 2) / D); one thread per entry.
extern "C" __global__ void sinusoid_embed(float* out, int P, int D)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)P * D) return;
    const int p = (int)(i / D), d = (int)(i % D);
    const float freq = powf(10000.0f, -(float)(2 * (d / 2)) / (float)D);
    const float angle = (float)p * freq;
    out[i] = (d & 1) ? cosf(angle) : sinf(angle);
}
