// CORPUS (second hold-out) small_grid: a 256 MB float4 copy done by 64 blocks of 512 threads in a
// grid-stride loop: 68 of 132 SMs never get a block.
extern "C" __global__ void copy_few_blocks(float4* y, const float4* x, int n4)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x)
        y[i] = x[i];
}
