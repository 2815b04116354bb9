// gmm_density: p[i] = sum_k w[k] / (sqrt(2 pi) s[k]) * exp(-0.5 ((x[i] - mu[k]) / s[k])^2),
// the density of a K-component 1-D Gaussian mixture at every sample, one thread per sample.
extern "C" __global__ void gmm_density(const float* x, const float* mu, const float* s,
                                       const float* w, float* p, int n, int K)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float xi = x[i];
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        const float z = (xi - mu[k]) / s[k];
        acc += w[k] / (2.5066282746f * s[k]) * expf(-0.5f * z * z);
    }
    p[i] = acc;
}
