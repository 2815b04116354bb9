// ln_wgrad: the weight gradients of a LayerNorm's affine, from dy [N, C] and the saved normalized
// input xhat [N, C] fp32: dgamma[c] = sum over rows of dy * xhat, dbeta[c] = sum of dy.
// One thread per column, stepping a pointer down the rows, the sums in double.
extern "C" __global__ void ln_wgrad(const float* dy, const float* xhat, float* dgamma, float* dbeta,
                                    int N, int C)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < C) {
        double sg = 0.0, sb = 0.0;
        const float* g = dy + col;
        const float* h = xhat + col;
        int r = 0;
        while (r < N) {
            sg += (double)(*g) * (double)(*h);
            sb += *g;
            g += C;
            h += C;
            r++;
        }
        dgamma[col] = (float)sg;
        dbeta[col] = (float)sb;
    }
}
