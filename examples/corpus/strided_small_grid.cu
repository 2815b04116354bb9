// CORPUS compound: small_grid (root) with uncoalesced access. 48 blocks of 256 threads, each
// thread summing its own contiguous segment of L floats: neighbouring threads are L*4 bytes apart
// (every warp load touches 32 sectors), and 84 of 132 SMs get no block. Fix both: many more
// blocks, and consecutive threads on consecutive elements (a warp per segment).
extern "C" __global__ void strided_small_grid(float* y, const float* x, int L)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const float* p = x + t * L;
    float acc = 0.0f;
    for (int j = 0; j < L; ++j) acc += p[j];
    y[t] = acc;
}
