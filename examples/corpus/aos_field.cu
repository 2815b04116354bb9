// CORPUS (held out) uncoalesced_access: an array of 64-byte structs (16 floats) from which the
// kernel reads one field and writes one field: lanes are 64 bytes apart, so each warp load
// touches 32 sectors of which it uses 4 bytes each, and the store the same. Fix: a structure of
// arrays.
struct Particle { float f[16]; };
extern "C" __global__ void aos_field(float* out, const Particle* p, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = p[i].f[3] * 2.0f + p[i].f[11];
}
