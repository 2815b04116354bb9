// CORPUS (held out) barrier_stall: 1024-thread blocks repeat a shared-memory tree reduction of
// register values, __syncthreads after every level: at each level half of the remaining warps
// have nothing to do but wait at the barrier, and the work per level is a single add.
extern "C" __global__ void tree_reduce_sync(float* y, const float* x, int reps)
{
    __shared__ float sm[1024];
    const int tid = threadIdx.x;
    float v = x[blockIdx.x * blockDim.x + tid];
    float total = 0.0f;
    for (int r = 0; r < reps; ++r) {
        sm[tid] = v + (float)r;
        __syncthreads();
        for (int s = 512; s >= 32; s >>= 1) {
            if (tid < s) sm[tid] += sm[tid + s];
            __syncthreads();
        }
        total += sm[tid & 31];
        __syncthreads();
    }
    y[blockIdx.x * blockDim.x + tid] = total;
}
