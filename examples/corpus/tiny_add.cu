// CORPUS launch_overhead: z = x + y over 64K floats, 256 blocks: a couple of microseconds, most
// of it launch, ramp-up and drain rather than work. Fix: fuse it into a neighbouring kernel, or
// batch such launches (CUDA graphs).
extern "C" __global__ void tiny_add(float* z, const float* x, const float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}
