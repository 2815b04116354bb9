// bias_grad_fast: dbias[c] = sum_r dout[r, c].
// Hand-written fast version of ../bias_grad.cu: a block of 16 x 64 threads owns a strip of 16
// adjacent columns (a warp reads 2 rows x 64 contiguous bytes: full sectors, not one 4-byte word
// per row); its 64 row-lanes step down the rows 4 at a time into 4 independent sums (4 loads in
// flight each), then the 64 partial sums of each column are added by a shuffle and a small
// shared-memory pass.
#define BX 16   // columns per block (blockDim.x)
#define BY 64   // row-lanes per block (blockDim.y)

extern "C" __global__ void __launch_bounds__(BX * BY)
bias_grad_fast(const float* __restrict__ dout, float* __restrict__ dbias, int N, int C)
{
    __shared__ float part[BY / 2][BX];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c = blockIdx.x * BX + tx;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    if (c < C) {
        const float* p = dout + c;
        int r = ty;
        for (; r + 3 * BY < N; r += 4 * BY) {
            a0 += __ldg(p + (size_t)r * C);
            a1 += __ldg(p + (size_t)(r + BY) * C);
            a2 += __ldg(p + (size_t)(r + 2 * BY) * C);
            a3 += __ldg(p + (size_t)(r + 3 * BY) * C);
        }
        for (; r < N; r += BY) a0 += __ldg(p + (size_t)r * C);
    }
    float acc = (a0 + a1) + (a2 + a3);

    // warp w holds row-lanes 2w (lanes 0-15) and 2w+1 (lanes 16-31) of the same 16 columns
    acc += __shfl_xor_sync(0xffffffffu, acc, 16);
    const int linear = ty * BX + tx, lane = linear & 31, warp = linear >> 5;
    if (lane < BX) part[warp][lane] = acc;
    __syncthreads();
    if (warp == 0) {  // all of warp 0: lanes 0-15 add the even warps, 16-31 the odd ones
        float t = 0.0f;
        for (int w = lane >> 4; w < BY / 2; w += 2) t += part[w][lane & 15];
        t += __shfl_xor_sync(0xffffffffu, t, 16);
        const int cc = blockIdx.x * BX + lane;
        if (lane < BX && cc < C) dbias[cc] = t;
    }
}
