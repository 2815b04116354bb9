// colsum_rows: s[c] = sum_r x[r, c], the column sums of a tall matrix, one thread per column
// walking down the rows (coalesced across the warp).
extern "C" __global__ void colsum_rows(const float* x, float* s, int R, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float acc = 0.0f;
    for (int r = 0; r < R; ++r) acc += x[(long long)r * C + c];
    s[c] = acc;
}
