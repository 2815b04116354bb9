// lse_vocab: lse[r] = log(sum_j exp(logits[r, j])) over a vocabulary-sized row (the normalizer
// of a cross-entropy loss). One 256-thread block per row: a max pass and a tree, then a pass
// summing exp(x - max) in double and a second tree.
#define THREADS 256

extern "C" __global__ void lse_vocab(const float* logits, float* lse, int N, int V)
{
    __shared__ float smax[THREADS];
    __shared__ double ssum[THREADS];
    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    const float* xr = logits + (size_t)row * V;

    float m = -INFINITY;
    for (int j = tid; j < V; j += blockDim.x) {
        float v = xr[j];
        m = v > m ? v : m;
    }
    smax[tid] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            smax[tid] = smax[tid + s] > smax[tid] ? smax[tid + s] : smax[tid];
        }
        __syncthreads();
    }
    const float rowmax = smax[0];

    double acc = 0.0;
    for (int j = tid; j < V; j += blockDim.x) {
        acc += (double)expf(xr[j] - rowmax);
    }
    ssum[tid] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            ssum[tid] += ssum[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        lse[row] = rowmax + (float)log(ssum[0]);
    }
}
