// CORPUS instruction_issue: four independent integer hash chains per thread mixing shifts,
// xors, adds and multiplies (ALU and FMA pipes alike) plus a float accumulation: many cheap
// instructions from several pipes, none of which saturates alone, so the schedulers issue on
// nearly every cycle. Fix: fewer instructions per result (wider types, strength reduction).
extern "C" __global__ void int_hash(unsigned* y, const unsigned* x, int n, int rounds)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned h[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) h[k] = x[i] + 0x9e3779b9u * (k + 1);
    float f = 0.0f;
    for (int r = 0; r < rounds; ++r) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            h[k] ^= h[k] >> 15;
            h[k] *= 0x2c1b3c6du;
            h[k] ^= h[k] >> 12;
            h[k] += 0x297a2d39u + r;
            f += (float)(h[k] & 0xff);
        }
    }
    y[i] = (h[0] ^ h[1] ^ h[2] ^ h[3]) + (unsigned)f;
}
