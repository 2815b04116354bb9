// max_reduce: y[r] = max_c x[r, c] for x [R, C] fp32 (a reduction over the last dim).
// Deliberately naive: one block per row, scalar loads with a block-stride loop, then a
// shared-memory tree reduction of BLOCK floats.
#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void max_reduce(const float* x, float* y, int C)
{
    __shared__ float buf[BLOCK];
    const int tid = threadIdx.x;
    const int n = blockDim.x;
    const long long row = (long long)blockIdx.x * C;

    float m = -INFINITY;
    for (int c = tid; c < C; c += n) m = fmaxf(m, x[row + c]);

    // Tree reduction; works for any block size.
    buf[tid] = m;
    __syncthreads();
    int p2 = 1;
    while (p2 < n) p2 <<= 1;
    for (int s = p2 / 2; s > 0; s >>= 1) {
        if (tid < s && tid + s < n) buf[tid] = fmaxf(buf[tid], buf[tid + s]);
        __syncthreads();
    }
    if (tid == 0) y[blockIdx.x] = buf[0];
}
