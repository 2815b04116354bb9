// REGRESSION PAIR strided, NEW: the same y[r][c] = 2 x[r][c] + 1, but the thread-index roles
// are swapped: consecutive threads walk down a column (r), so the 32 lanes of a warp touch 32
// addresses C * 4 bytes apart. Every warp load and store hits 32 sectors and uses 4 of each
// sector's 32 bytes (12.5%); the same result costs 8x the sector traffic.
extern "C" __global__ void scale_2d(float* y, const float* x, int R, int C)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)R * C) return;
    const long long r = t % R, c = t / R;  // consecutive threads: consecutive ROWS (strided)
    const long long i = r * C + c;
    y[i] = fmaf(2.0f, x[i], 1.0f);
}
