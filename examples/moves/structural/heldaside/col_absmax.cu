// col_absmax: amax[c] = max_r |x[r, c]|, the per-channel scale of a quantizer.
// One thread per column walking down the rows.
extern "C" __global__ void col_absmax(const float* x, float* amax, int N, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float m = 0.0f;
    long long off = c;
    int r = 0;
    while (r < N) {
        float a = fabsf(x[off]);
        m = a > m ? a : m;
        off += C;
        r++;
    }
    amax[c] = m;
}
