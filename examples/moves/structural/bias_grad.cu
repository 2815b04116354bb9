// bias_grad: dbias[c] = sum_r dout[r, c], the gradient of a bias added to every row of an
// [N, C] activation. One block per column: its threads step down the rows, then a
// shared-memory tree adds their sums.
extern "C" __global__ void bias_grad(const float* dout, float* dbias, int N, int C)
{
    __shared__ float buf[256];
    int c = blockIdx.x;
    float acc = 0.0f;
    for (int r = threadIdx.x; r < N; r += blockDim.x) {
        acc += dout[(size_t)r * C + c];
    }
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            buf[threadIdx.x] += buf[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        dbias[c] = buf[0];
    }
}
