// CORPUS (second hold-out) uncoalesced_access: reads are coalesced, but each thread writes its
// result into field 5 of a 32-byte record (an array of structures of 8 floats): every warp
// store touches 32 sectors and fills 4 bytes of each.
extern "C" __global__ void scatter_store(float* records, const float* x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) records[(long long)i * 8 + 5] = x[i] * 3.0f + 1.0f;
}
