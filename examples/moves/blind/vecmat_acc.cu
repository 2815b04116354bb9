// y = x^T A for a row-major A [K, N]: thread j accumulates column j straight into y[j].
extern "C" __global__ void vecmat_acc(float* y, const float* A, const float* x, int K, int N)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    y[j] = 0.0f;
    for (int k = 0; k < K; ++k)
        y[j] += x[k] * A[(long long)k * N + j];
}
