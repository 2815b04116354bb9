// ln_wgrad_fast: dgamma[c] = sum over rows of dy * xhat, dbeta[c] = sum of dy, dy, xhat [N, C] fp32.
// Hand-written fast version of ../ln_wgrad.cu: a 1024-thread block per strip of 32 columns
// (128 blocks for C = 4096). Its 32 warps split the rows (warp w takes rows w, w + 32, ...); a
// warp reads a row's strip as one coalesced 128-byte line of each input, 4 rows per iteration
// into independent fp32 sums, so 8 loads are in flight per lane. The 32 partials per column
// go through padded shared memory, and warp w sums column w with shuffles.
#define WARPS 32

extern "C" __global__ void __launch_bounds__(1024)
ln_wgrad_fast(const float* __restrict__ dy, const float* __restrict__ xhat, float* __restrict__ dgamma,
              float* __restrict__ dbeta, int N, int C)
{
    __shared__ float pg[WARPS][33];
    __shared__ float pb[WARPS][33];
    const int lane = threadIdx.x & 31;
    const int w = threadIdx.x >> 5;
    const int c = blockIdx.x * 32 + lane;

    float g0 = 0.0f, g1 = 0.0f, g2 = 0.0f, g3 = 0.0f;
    float b0 = 0.0f, b1 = 0.0f, b2 = 0.0f, b3 = 0.0f;
    if (c < C) {
        const size_t step = (size_t)WARPS * C;
        const float* pd = dy + (size_t)w * C + c;
        const float* px = xhat + (size_t)w * C + c;
        int r = w;
        for (; r + 3 * WARPS < N; r += 4 * WARPS, pd += 4 * step, px += 4 * step) {
            const float d0 = pd[0], d1 = pd[step], d2 = pd[2 * step], d3 = pd[3 * step];
            const float x0 = px[0], x1 = px[step], x2 = px[2 * step], x3 = px[3 * step];
            g0 += d0 * x0;
            g1 += d1 * x1;
            g2 += d2 * x2;
            g3 += d3 * x3;
            b0 += d0;
            b1 += d1;
            b2 += d2;
            b3 += d3;
        }
        for (; r < N; r += WARPS, pd += step, px += step) {
            const float d0 = pd[0];
            g0 += d0 * px[0];
            b0 += d0;
        }
    }
    pg[w][lane] = (g0 + g1) + (g2 + g3);
    pb[w][lane] = (b0 + b1) + (b2 + b3);
    __syncthreads();

    float sg = pg[lane][w];                    // warp w: column w of the strip, lane = row-warp
    float sb = pb[lane][w];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        sg += __shfl_xor_sync(0xffffffffu, sg, o);
        sb += __shfl_xor_sync(0xffffffffu, sb, o);
    }
    const int cw = blockIdx.x * 32 + w;
    if (lane == 0 && cw < C) {
        dgamma[cw] = sg;
        dbeta[cw] = sb;
    }
}
