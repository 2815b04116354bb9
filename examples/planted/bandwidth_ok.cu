// PLANTED: memory_bandwidth (the healthy case).
// y = 2 * x + 1 over n fp32 values, written the way a streaming kernel should be: 16-byte
// vector loads and stores (float4), read-only cached loads, VPT independent vectors in flight
// per thread, all accesses fully coalesced, enough blocks to fill every SM for many waves.
// It moves 8 bytes per element and does one FMA per 8 bytes, so the only limit is DRAM:
// dram__throughput ~90% of peak (about 3.8-4.1 TB/s on an H200). The correct verdict is
// "memory-bandwidth-bound, at the roofline: little headroom left" - not a list of fixes.
#ifndef VPT
#define VPT 2
#endif

extern "C" __global__ void bandwidth_ok(float* __restrict__ y, const float* __restrict__ x, int n)
{
    const int n4 = n >> 2;  // whole float4 vectors; x and y are 16-byte aligned
    const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
    float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
    const int base = blockIdx.x * blockDim.x * VPT + threadIdx.x;

    float4 v[VPT];
#pragma unroll
    for (int u = 0; u < VPT; ++u) {  // issue all loads first: VPT * 16 bytes in flight
        const int j = base + u * blockDim.x;
        if (j < n4) v[u] = __ldg(x4 + j);
    }
#pragma unroll
    for (int u = 0; u < VPT; ++u) {
        const int j = base + u * blockDim.x;
        if (j < n4) y4[j] = make_float4(fmaf(2.0f, v[u].x, 1.0f), fmaf(2.0f, v[u].y, 1.0f),
                                        fmaf(2.0f, v[u].z, 1.0f), fmaf(2.0f, v[u].w, 1.0f));
    }
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {  // the last n % 4 elements
        const int i = (n4 << 2) + threadIdx.x;
        y[i] = fmaf(2.0f, x[i], 1.0f);
    }
}
