// student_t: the log-density of a Student-t distribution with nu degrees of freedom, location
// mu and scale sigma at every x[i], one thread per sample.
extern "C" __global__ void student_t(const float* x, float* logp, int n, float nu, float mu,
                                     float sigma)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float c = lgammaf(0.5f * (nu + 1.0f)) - lgammaf(0.5f * nu)
                    - 0.5f * logf(nu * 3.14159265f) - logf(sigma);
    if (i < n) {
        const float z = (x[i] - mu) / sigma;
        logp[i] = c - 0.5f * (nu + 1.0f) * log1pf(z * z / nu);
    }
}
