// CORPUS uncoalesced_access: consecutive threads read 16 KB apart.
// x is [R, W] fp32 with W = 4096 (16 KB rows). Thread t = s * R + r sums the segment
// x[r, s*S : (s+1)*S]; neighbouring threads (r, r+1) are one row, 16 KB, apart, so each warp-wide
// load touches 32 sectors in 32 different lines while it uses 4 bytes of each (ideal: 4 sectors
// per request). The store of the sum is coalesced. Fix: one warp per row segment, or a
// transposed layout.
extern "C" __global__ void column_walk(float* y, const float* x, int R, int W, int S)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long segs = W / S;
    if (t >= segs * R) return;
    const long long r = t % R, s = t / R;
    const float* p = x + r * W + s * S;
    float acc = 0.0f;
    for (int j = 0; j < S; ++j) acc += p[j];
    y[s * R + r] = acc;
}
