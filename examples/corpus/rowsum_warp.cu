// CORPUS (held out) memory_bandwidth, healthy: y[r] = sum of row r of x [R, C] fp32, one warp per
// row reading float4 vectors coalesced, with a shuffle reduction. 512 MB read once: DRAM-bound
// near the copy ceiling.
extern "C" __global__ void rowsum_warp(float* y, const float* x, int R, int C)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= R) return;
    const float4* row = reinterpret_cast<const float4*>(x + (long long)warp * C);
    float s = 0.0f;
    for (int j = lane; j < C / 4; j += 32) {
        const float4 v = __ldg(row + j);
        s += (v.x + v.y) + (v.z + v.w);
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) y[warp] = s;
}
