// col_absmax_fast: amax[c] = max_r |x[r, c]|.
// Hand-written fast version of ../col_absmax.cu: a block of 16 x 64 threads owns a strip of 16
// adjacent columns (a warp reads 2 rows x 64 contiguous bytes); its 64 row-lanes step down the
// rows 4 at a time into 4 independent maxima (4 loads in flight each), then the 64 partial
// maxima of each column are combined by a shuffle and a small shared-memory pass.
#define BX 16   // columns per block (blockDim.x)
#define BY 64   // row-lanes per block (blockDim.y)

extern "C" __global__ void __launch_bounds__(BX * BY)
col_absmax_fast(const float* __restrict__ x, float* __restrict__ amax, int N, int C)
{
    __shared__ float part[BY / 2][BX];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c = blockIdx.x * BX + tx;
    float m0 = 0.0f, m1 = 0.0f, m2 = 0.0f, m3 = 0.0f;
    if (c < C) {
        const float* p = x + c;
        int r = ty;
        for (; r + 3 * BY < N; r += 4 * BY) {
            m0 = fmaxf(m0, fabsf(__ldg(p + (size_t)r * C)));
            m1 = fmaxf(m1, fabsf(__ldg(p + (size_t)(r + BY) * C)));
            m2 = fmaxf(m2, fabsf(__ldg(p + (size_t)(r + 2 * BY) * C)));
            m3 = fmaxf(m3, fabsf(__ldg(p + (size_t)(r + 3 * BY) * C)));
        }
        for (; r < N; r += BY) m0 = fmaxf(m0, fabsf(__ldg(p + (size_t)r * C)));
    }
    float m = fmaxf(fmaxf(m0, m1), fmaxf(m2, m3));

    // warp w holds row-lanes 2w (lanes 0-15) and 2w+1 (lanes 16-31) of the same 16 columns
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
    const int linear = ty * BX + tx, lane = linear & 31, warp = linear >> 5;
    if (lane < BX) part[warp][lane] = m;
    __syncthreads();
    if (warp == 0) {  // all of warp 0: lanes 0-15 take the even warps, 16-31 the odd ones
        float t = 0.0f;
        for (int w = lane >> 4; w < BY / 2; w += 2) t = fmaxf(t, part[w][lane & 15]);
        t = fmaxf(t, __shfl_xor_sync(0xffffffffu, t, 16));
        const int cc = blockIdx.x * BX + lane;
        if (lane < BX && cc < C) amax[cc] = t;
    }
}
