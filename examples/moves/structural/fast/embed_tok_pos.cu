// embed_tok_pos_fast: out[b, t, c] = wte[tokens[b, t], c] + wpe[t, c].
// Hand-written fast version of ../embed_tok_pos.cu: one 128-thread block per token (no 64-bit
// division per element: the token's row and position are read once), float4 loads and stores
// along the channels when C % 4 == 0 and the pointers are 16-byte aligned, scalar otherwise.
#include <stdint.h>

extern "C" __global__ void __launch_bounds__(128)
embed_tok_pos_fast(float* __restrict__ out, const int* __restrict__ tokens,
                   const float* __restrict__ wte, const float* __restrict__ wpe,
                   int B, int T, int C)
{
    const int bt = blockIdx.x;  // grid = B * T
    const int t = bt % T;
    const int tok = __ldg(tokens + bt);
    const float* e = wte + (size_t)tok * C;
    const float* p = wpe + (size_t)t * C;
    float* o = out + (size_t)bt * C;
    const bool vec = (C & 3) == 0 &&
        ((reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(wte) |
          reinterpret_cast<uintptr_t>(wpe)) & 15) == 0;
    if (vec) {
        const float4* e4 = reinterpret_cast<const float4*>(e);
        const float4* p4 = reinterpret_cast<const float4*>(p);
        float4* o4 = reinterpret_cast<float4*>(o);
        const int C4 = C >> 2;
        for (int i = threadIdx.x; i < C4; i += blockDim.x) {
            const float4 a = __ldg(e4 + i), b = __ldg(p4 + i);
            o4[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
        }
    } else {
        for (int c = threadIdx.x; c < C; c += blockDim.x) o[c] = __ldg(e + c) + __ldg(p + c);
    }
}
