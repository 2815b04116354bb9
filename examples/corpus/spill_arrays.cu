// CORPUS register_spills: 40 values live across every pass of a mixing loop, compiled with
// -maxrregcount=32 (see the spec's flags). ptxas spills a third of them to local memory, and each
// pass reloads and re-stores the spilled ones: local-memory traffic through L1 dwarfs the 8 bytes
// of global traffic per thread. Fix: allow the registers (drop the cap / __launch_bounds__ with
// fewer blocks), or restructure so fewer values stay live.
#define K 40
extern "C" __global__ void spill_arrays(float* y, const float* x, int n, int passes)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float x0 = x[i];
    float v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = x0 * (float)(k + 1);
    for (int p = 0; p < passes; ++p) {
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = fmaf(v[k], 0.5f, v[(k + 13) % K]);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) s += v[k];
    y[i] = s;
}
