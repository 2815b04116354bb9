// Per-pixel Pearson correlation between two co-registered image time series (e.g. NDVI and
// temperature anomaly), each ntime x npix, row-major (one flattened image per time step).
extern "C" __global__ void pixel_corr(float* corr, const float* a, const float* b,
                                      int ntime, int npix)
{
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < npix; p += blockDim.x * gridDim.x) {
        float sa = 0.0f, sb = 0.0f, saa = 0.0f, sbb = 0.0f, sab = 0.0f;
        for (int t = 0; t < ntime; t++) {
            float x = a[t * npix + p];
            float y = b[t * npix + p];
            sa += x;
            sb += y;
            saa += x * x;
            sbb += y * y;
            sab += x * y;
        }
        float n = (float)ntime;
        float cov = sab - sa * sb / n;
        float va = saa - sa * sa / n;
        float vb = sbb - sb * sb / n;
        corr[p] = cov / sqrtf(va * vb);
    }
}
