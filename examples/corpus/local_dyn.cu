// CORPUS local_memory (a stack array, not spills): a per-thread float buf[32] indexed by values
// computed at run time cannot live in registers, so the compiler places it on the stack (local
// memory) although registers are plentiful and nothing spills. Every iteration does a local load
// and a local store, at 32 different slots per warp. Fix: keep the table in shared memory
// (one slice per thread), or restructure so the indices are compile-time constants.
extern "C" __global__ void local_dyn(float* y, const float* x, const int* sel, int n, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float buf[32];
    const float x0 = x[i];
#pragma unroll
    for (int k = 0; k < 32; ++k) buf[k] = x0 + (float)k;
    int j = sel[i] & 31;
    float acc = 0.0f;
    for (int it = 0; it < iters; ++it) {
        acc = fmaf(acc, 0.5f, buf[j]);
        buf[(j * 7 + it) & 31] = acc;
        j = (j + (__float_as_int(acc) >> 7)) & 31;
    }
    y[i] = acc;
}
