// Market beta of every asset over a daily return history: beta_i = cov(r_i, m) / var(m).
// R is ndays x nassets, row-major (one row per trading day); m is the market's daily return.
extern "C" __global__ void asset_beta(float* beta, const float* R, const float* m,
                                      int ndays, int nassets)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nassets) return;

    float sx = 0.0f, sy = 0.0f, sxy = 0.0f, syy = 0.0f;
    const float* r = R + i;
    for (int t = 0; t < ndays; ++t, r += nassets) {
        float x = *r;
        float y = m[t];
        sx += x;
        sy += y;
        sxy += x * y;
        syy += y * y;
    }
    float n = (float)ndays;
    float cov = sxy - sx * sy / n;
    float var = syy - sy * sy / n;
    beta[i] = cov / var;
}
