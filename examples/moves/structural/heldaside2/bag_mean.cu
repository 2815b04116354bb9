// bag_mean: an embedding bag in mean mode. Bag b holds K row ids idx[b, :] into table [V, D]
// fp32; out[b, :] is the mean of those K rows. One thread per bag, walking the columns, the
// bag's K rows summed for each column.
extern "C" __global__ void bag_mean(const int* idx, const float* table, float* out,
                                    int B, int K, int D)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= B)
        return;
    for (int d = 0; d < D; d++) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) {
            size_t row = (size_t)idx[b * K + k];
            acc += table[row * D + d];
        }
        out[(size_t)b * D + d] = acc / K;
    }
}
