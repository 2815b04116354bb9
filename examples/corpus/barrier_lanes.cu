// CORPUS (second hold-out) barrier_stall: in each 1024-thread block one warp in 32 computes a
// dependent integer chain per step, then the block synchronizes twice; the other 31 warps
// spend the step waiting at the barrier. No shared-memory traffic to speak of.
extern "C" __global__ void barrier_lanes(unsigned* y, const unsigned* x, int steps)
{
    __shared__ unsigned token[32];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    unsigned v = x[blockIdx.x * blockDim.x + tid];
    unsigned acc = 0;
    for (int s = 0; s < steps; ++s) {
        if (warp == (s & 31)) {
            for (int r = 0; r < 48; ++r) v = v * 1103515245u + 12345u + (v >> 7);
            token[lane] = v;
        }
        __syncthreads();
        acc += token[(lane + s) & 31];
        __syncthreads();
    }
    y[blockIdx.x * blockDim.x + tid] = acc + v;
}
