// row_absmax_scale: a per-row int8-style scale: amax[r] = max_j |x[r, j]|, q[r, j] =
// x[r, j] * 127 / amax[r], scale[r] = amax[r] / 127. One 512-thread block per row; the
// maximum combined in a shared-memory tree, the interleaved way, and read back by every thread.
extern "C" __global__ void row_absmax_scale(const float* __restrict__ x, float* q, float* scale,
                                            int rows, int cols)
{
    __shared__ float red[512];
    const unsigned int t = threadIdx.x;
    const float* xr = x + (size_t)blockIdx.x * cols;
    float m = 0.0f;
    for (int j = t; j < cols; j += blockDim.x)
        m = fmaxf(m, fabsf(xr[j]));
    red[t] = m;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s <<= 1) {
        if (t % (2 * s) == 0)
            red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    const float amax = red[0];
    const float inv = 127.0f / amax;
    for (int j = t; j < cols; j += blockDim.x)
        q[(size_t)blockIdx.x * cols + j] = xr[j] * inv;
    if (t == 0)
        scale[blockIdx.x] = amax / 127.0f;
}
