// PLANTED: warp_divergence.
// y[i] = float(x[i]) iterated `iters` times through a chain of FMAs whose form depends on the
// lane's position in its warp (lane % 8). The 8 paths are different code, so a warp executes
// all 8 one after another with only the 4 lanes of that path active: about 4 of 32 threads do
// work per executed instruction (smsp__thread_inst_executed_per_inst_executed.ratio ~ 4).
// Memory traffic is one int load and one float store per thread. The pipes look busy at the
// warp level, but 7/8 of every issued FMA's lanes are masked off.
// `m` is 1.0 at run time (the compiler cannot fold it), so every value stays an integer below
// 2^24 and the result is exact: y = x + iters * (sum of the path's addends).
extern "C" __global__ void divergence(float* y, const int* x, int n, int iters, float m)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = (float)x[i];
    float w = 0.0f;
    switch (threadIdx.x & 7) {  // 8 structurally different paths, chosen by lane
    case 0: for (int it = 0; it < iters; ++it) v = fmaf(v, m, 1.0f); break;
    case 1: for (int it = 0; it < iters; ++it) { v = fmaf(v, m, 2.0f); } break;
    case 2: for (int it = 0; it < iters; ++it) { w = fmaf(w, m, 1.0f); v = fmaf(v, m, 2.0f); } v += w; break;
    case 3: for (int it = 0; it < iters; ++it) { v = fmaf(v, m, 3.0f); v = fmaf(v, m, 1.0f); } break;
    case 4: for (int it = 0; it < iters; it += 2) { v = fmaf(v, m, 5.0f); v = fmaf(v, m, 5.0f); } break;
    case 5: for (int it = 0; it < iters; ++it) { w = fmaf(w, m, 3.0f); } v += w + w; break;
    case 6: for (int it = 0; it < iters; ++it) { v = fmaf(m, v, 7.0f); } break;
    default: for (int it = 0; it < iters; ++it) { w = fmaf(w, m, 4.0f); v = fmaf(v, m, 4.0f); } v += w; break;
    }
    y[i] = v;
}
