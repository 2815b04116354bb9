// l2norm_heads: y = x / max(||x||_2, eps) for each row of x [R, D] fp32 (the L2 normalization of
// queries and keys per head, R = tokens x heads, D = head dim); one thread per row.
extern "C" __global__ void l2norm_heads(const float* x, float* y, int R, int D, float eps)
{
    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R)
        return;
    const float* xr = x + r * D;
    float* yr = y + r * D;

    double ss = 0.0;
    int j = 0;
    while (j < D) {
        double v = xr[j];
        ss += v * v;
        j += 1;
    }
    float nrm = (float)sqrt(ss);
    float denom = nrm > eps ? nrm : eps;

    j = 0;
    while (j < D) {
        yr[j] = xr[j] / denom;
        ++j;
    }
}
