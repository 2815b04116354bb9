// gather_scale_rows: out[k, :] = table[ids[k], :] * scale[k], rows picked by index and scaled
// (e.g. the experts' outputs weighted by their router scores). One 32-thread block per row.
extern "C" __global__ void gather_scale_rows(const float* table, const int* ids, const float* scale,
                                             float* out, int K, int C)
{
    int k = blockIdx.x;
    int row = ids[k];
    float s = scale[k];
    for (int c = threadIdx.x; c < C; c += 32) {
        out[(size_t)k * C + c] = table[(size_t)row * C + c] * s;
    }
}
