// Lag-k autocovariance of every parameter of an MCMC run (for effective sample sizes):
// draws[t][j] holds draw t of parameter j. One thread per parameter, one pass over the
// draws; the sums are kept in double because the mean is subtracted at the end.
extern "C" __global__ void chain_autocov(float *acov, const float *draws,
                                         unsigned ndraws, unsigned nparams, unsigned lag)
{
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nparams)
        return;

    unsigned n = ndraws - lag;
    double sa = 0.0, sb = 0.0, sab = 0.0;
    for (unsigned t = 0; t < n; t++) {
        double a = draws[t * nparams + j];
        double b = draws[(t + lag) * nparams + j];
        sa += a;
        sb += b;
        sab += a * b;
    }
    acov[j] = (float)((sab - sa * sb / n) / n);
}
