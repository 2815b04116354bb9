// gamma_lut: dst[i] = round(255 * (src[i] / 255) ^ gamma) for 8-bit pixels. Each block first
// builds the 256-entry lookup table in shared memory (one entry per thread), then every thread
// maps its pixel through it.
extern "C" __global__ void gamma_lut(const unsigned char* src, unsigned char* dst, int n,
                                     float gamma)
{
    __shared__ unsigned char lut[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float v = powf(threadIdx.x / 255.0f, gamma);
    lut[threadIdx.x] = (unsigned char)fminf(255.0f, floorf(255.0f * v + 0.5f));
    __syncthreads();
    if (i >= n) return;
    dst[i] = lut[src[i]];
}
