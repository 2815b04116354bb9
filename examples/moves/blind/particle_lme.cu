// Log marginal likelihood estimate per model from importance sampling: for each of the nmodels
// models, log( mean over the particles of exp(logw) ). logw is stored particle-major
// (logw[p * nmodels + m]) as the sampler writes it; a running max keeps exp from overflowing.
extern "C" __global__ void particle_lme(float* out, float* logw, int nparticles, int nmodels)
{
    int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= nmodels) return;

    float mx = logw[m];
    float s = 1.0f;
    for (int p = 1; p < nparticles; ++p) {
        float lw = logw[p * nmodels + m];
        if (lw > mx) {
            s = s * expf(mx - lw) + 1.0f;
            mx = lw;
        } else {
            s += expf(lw - mx);
        }
    }
    out[m] = mx + logf(s / nparticles);
}
