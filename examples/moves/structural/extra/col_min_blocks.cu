// col_min_blocks: mins[j] = min_i a[i, j]. One 128-thread block per column; its threads step
// down the rows, a shared-memory tree takes the minimum.
#define THREADS 128

extern "C" __global__ void col_min_blocks(const float* a, float* mins, int nrows, int ncols)
{
    __shared__ float cache[THREADS];
    int tid = threadIdx.x;
    int j = blockIdx.x;
    float lo = INFINITY;
    for (int i = tid; i < nrows; i += blockDim.x)
        lo = fminf(lo, a[i * ncols + j]);
    cache[tid] = lo;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            cache[tid] = fminf(cache[tid], cache[tid + stride]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        mins[j] = cache[0];
    }
}
