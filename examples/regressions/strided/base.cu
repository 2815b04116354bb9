// REGRESSION PAIR strided, BASE: y[r][c] = 2 x[r][c] + 1 over an [R, C] fp32 matrix, one thread
// per element, consecutive threads along the contiguous dimension c: each warp load and store
// covers 128 contiguous bytes (4 sectors, every byte used).
extern "C" __global__ void scale_2d(float* y, const float* x, int R, int C)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)R * C) return;
    const long long r = t / C, c = t % C;  // consecutive threads: consecutive columns
    const long long i = r * C + c;
    y[i] = fmaf(2.0f, x[i], 1.0f);
}
