// transpose_affine: out[c, r] = alpha * w[r, c] + bias[c] for w [R, C] fp32, a weight re-laid
// for the next layer and scaled and shifted on the way. One thread per element of w, adjacent
// threads along its row: the reads are coalesced, the writes R floats apart.
extern "C" __global__ void transpose_affine(const float* w, const float* bias, float* out,
                                            float alpha, int R, int C)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= R || col >= C) return;
    const float v = w[(size_t)row * C + col];
    out[(size_t)col * R + row] = alpha * v + bias[col];
}
