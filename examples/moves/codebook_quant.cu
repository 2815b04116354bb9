// codebook_quant: q[i] = the index of the codeword nearest to x[i] in a sorted 256-entry
// codebook (scalar quantization). Each block first copies the codebook and the midpoints
// between codewords into shared memory, then each thread binary-searches its value.
extern "C" __global__ void codebook_quant(const float* x, const float* codebook, int* q, int n)
{
    __shared__ float mid[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int t = threadIdx.x;
    mid[t] = t < 255 ? 0.5f * (codebook[t] + codebook[t + 1]) : 3.0e38f;
    __syncthreads();
    if (i >= n) return;
    const float v = x[i];
    int lo = 0, hi = 255;  // the first midpoint above v is the nearest codeword
    while (lo < hi) {
        const int m = (lo + hi) >> 1;
        if (mid[m] > v) hi = m; else lo = m + 1;
    }
    q[i] = lo;
}
