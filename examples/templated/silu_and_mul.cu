// silu_and_mul, parameterized: out[t, j] = silu(x[t, j]) * x[t, d + j], silu(a) = a / (1 + exp(-a)).
// x is [T, 2*d] fp16, out is [T, d] fp16; math in fp32.
//
// Knobs (plain #defines, so any tool can inject them with -DNAME=VALUE):
//   BLOCK  threads per block (also the __launch_bounds__)
//   VEC    fp16 elements per load/store: 1, 2, 4 or 8 (2 to 16-byte accesses)
//   ROWS   token rows per block; launch with grid = ceil_div(T, ROWS). Each thread loads its
//          elements of all ROWS rows before computing, so ROWS independent loads are in flight.
//
// The VEC-wide path needs d % VEC == 0 and VEC*2-byte aligned base pointers (then every row start
// and the gate half x[t, d:] are aligned too). Otherwise the whole launch takes the scalar path,
// so sizes like d = 1001 are handled. The condition is uniform over the launch (no divergence).
// T is passed because with ROWS > 1 the last block may cover rows past the end.
#include <cuda_fp16.h>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 8
#endif
#ifndef ROWS
#define ROWS 1
#endif

#if VEC == 8
typedef uint4 silu_vec_t;
#elif VEC == 4
typedef uint2 silu_vec_t;
#elif VEC == 2
typedef unsigned int silu_vec_t;
#elif VEC == 1
typedef unsigned short silu_vec_t;
#else
#error "VEC must be 1, 2, 4 or 8"
#endif

union SiluPack {
    silu_vec_t v;
    __half h[VEC];
};

// __fdividef instead of '/': the IEEE division's slow path is a subroutine call whose saved
// registers ptxas reports as spills. For a < -88 expf(-a) is inf and __fdividef gives -0, the
// correctly rounded fp16 answer; elsewhere its 2-ulp error is far below fp16 resolution.
__device__ __forceinline__ float silu_mul(float a, float b)
{
    return __fdividef(a, 1.0f + expf(-a)) * b;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
silu_and_mul(__half* __restrict__ out, const __half* __restrict__ x, int d, int T)
{
    const int row0 = blockIdx.x * ROWS;
    const int tid = threadIdx.x;

    const bool aligned = (d % VEC == 0)
        && ((((unsigned long long)x) | ((unsigned long long)out)) % (VEC * sizeof(__half)) == 0);

    if (aligned) {
        const int nvec = d / VEC;  // vectors per row half
        for (int i = tid; i < nvec; i += BLOCK) {
            SiluPack a[ROWS], b[ROWS];
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                if (row0 + r < T) {
                    const silu_vec_t* xr =
                        reinterpret_cast<const silu_vec_t*>(x + (long long)(row0 + r) * 2 * d);
                    a[r].v = __ldg(xr + i);
                    b[r].v = __ldg(xr + nvec + i);
                }
            }
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                if (row0 + r < T) {
                    SiluPack o;
#pragma unroll
                    for (int k = 0; k < VEC; ++k)
                        o.h[k] = __float2half_rn(silu_mul(__half2float(a[r].h[k]),
                                                          __half2float(b[r].h[k])));
                    reinterpret_cast<silu_vec_t*>(out + (long long)(row0 + r) * d)[i] = o.v;
                }
            }
        }
    } else {
        // Scalar fallback: any d, any alignment.
        for (int j = tid; j < d; j += BLOCK) {
            float a[ROWS], b[ROWS];
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                if (row0 + r < T) {
                    const __half* xr = x + (long long)(row0 + r) * 2 * d;
                    a[r] = __half2float(__ldg(xr + j));
                    b[r] = __half2float(__ldg(xr + d + j));
                }
            }
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                if (row0 + r < T)
                    out[(long long)(row0 + r) * d + j] = __float2half_rn(silu_mul(a[r], b[r]));
            }
        }
    }
}
