// CORPUS (second hold-out) memory_bandwidth, healthy: y = x + 1 over 384 MB in and out with 8-byte
// float2 accesses, four per thread issued before use: DRAM near the copy ceiling.
extern "C" __global__ void copy_float2(float2* y, const float2* x, int n2)
{
    const int stride = gridDim.x * blockDim.x;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) if (i + k * stride < n2) v[k] = x[i + k * stride];
#pragma unroll
    for (int k = 0; k < 4; ++k)
        if (i + k * stride < n2) y[i + k * stride] = make_float2(v[k].x + 1.0f, v[k].y + 1.0f);
}
