// lut_stream: out[i] = scale[i] * lut[code[i] & mask], decoding a stream of codes through a
// 64K-entry table (a dictionary decode). The table is declared read-only; the stream is not.
extern "C" __global__ void lut_stream(const int* code, const float* scale,
                                      const float* __restrict__ lut, float* out, int n, int mask)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = scale[i] * lut[code[i] & mask];
}
