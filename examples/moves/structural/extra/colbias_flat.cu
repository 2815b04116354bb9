// colbias_flat: y [R, C] = x [R, C] * scale + bias [C], fp32, row-major, one thread per
// element of a flat index split the column-major way: t % R is the row and t / R the column,
// so adjacent threads hold adjacent rows and touch addresses C floats apart.
extern "C" __global__ void colbias_flat(const float* x, const float* bias, float* y, float scale,
                                        int R, int C)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int r = t % R;
    int c = t / R;
    if (r < R && c < C) {
        y[r * C + c] = x[r * C + c] * scale + bias[c];
    }
}
