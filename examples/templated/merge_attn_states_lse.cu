// merge_attn_states_lse, parameterized as a C++ function template: merge two partial attention
// results by their log-sum-exp values (like SGLang's merge_state / vLLM's merge_attn_states):
//   m     = max(s_a, s_b)
//   w_a   = exp(s_a - m),  w_b = exp(s_b - m)
//   out   = (v_a * w_a + v_b * w_b) / (w_a + w_b)
//   s_out = m + log(w_a + w_b)
// v_a, v_b, out are [T, NH, HD] fp16; s_a, s_b, s_out are [T, NH] fp32; math in fp32.
//
// Template parameters (spec params VEC, BLOCK, HEADS_PER_BLOCK, in this order):
//   kVec            fp16 elements per load/store: 1, 2, 4 or 8 (2 to 16-byte accesses)
//   kBlock          threads per block (launch block = BLOCK)
//   kHeadsPerBlock  (token, head) pairs per block; launch grid = ceil_div(T * NH, HEADS_PER_BLOCK)
// A block first computes the two weights and s_out of its heads once (one thread per head, into
// shared memory), then its threads stride over the block's heads' elements, which are contiguous
// in memory ([T, NH] flattened is the head index).
//
// The kVec-wide path needs HD % kVec == 0 and kVec*2-byte aligned pointers (then every head's
// row is aligned); otherwise the launch takes the scalar path, so HD = 99 works. The choice is
// uniform over the launch.
//
// The spec's param names are not used as identifiers here, so the file also compiles when a
// tool defines them as macros (-DVEC=... etc.).
#include <cuda_fp16.h>

namespace {

// V fp16 values in (V + 1) / 2 32-bit words; conversions on the bits keep them in registers.
template <int V> struct HalfPack {
    unsigned int w[(V + 1) / 2];

    __device__ __forceinline__ float get(int k) const
    {
        return __half2float(__ushort_as_half((unsigned short)(k % 2 ? w[k / 2] >> 16 : w[k / 2])));
    }
    __device__ __forceinline__ void set(int k, float x)
    {
        const unsigned int b = __half_as_ushort(__float2half_rn(x));
        w[k / 2] = k % 2 ? ((w[k / 2] & 0x0000ffffu) | (b << 16)) : ((w[k / 2] & 0xffff0000u) | b);
    }
};

// Vector i of an aligned array (all arrays here are read-only except out).
template <int V>
__device__ __forceinline__ HalfPack<V> load_ro(const __half* p, long long i)
{
    HalfPack<V> r;
    if constexpr (V == 8) {
        const uint4 u = __ldg(reinterpret_cast<const uint4*>(p) + i);
        r.w[0] = u.x; r.w[1] = u.y; r.w[2] = u.z; r.w[3] = u.w;
    } else if constexpr (V == 4) {
        const uint2 u = __ldg(reinterpret_cast<const uint2*>(p) + i);
        r.w[0] = u.x; r.w[1] = u.y;
    } else if constexpr (V == 2) {
        r.w[0] = __ldg(reinterpret_cast<const unsigned int*>(p) + i);
    } else {
        r.w[0] = __ldg(reinterpret_cast<const unsigned short*>(p) + i);
    }
    return r;
}

template <int V>
__device__ __forceinline__ void store(__half* p, long long i, const HalfPack<V>& r)
{
    if constexpr (V == 8) {
        reinterpret_cast<uint4*>(p)[i] = make_uint4(r.w[0], r.w[1], r.w[2], r.w[3]);
    } else if constexpr (V == 4) {
        reinterpret_cast<uint2*>(p)[i] = make_uint2(r.w[0], r.w[1]);
    } else if constexpr (V == 2) {
        reinterpret_cast<unsigned int*>(p)[i] = r.w[0];
    } else {
        reinterpret_cast<unsigned short*>(p)[i] = (unsigned short)r.w[0];
    }
}

// out = v_a * f.x + v_b * f.y for vector i (in units of V elements) of the arrays.
template <int V>
__device__ __forceinline__ void merge_vec(const __half* v_a, const __half* v_b, __half* out,
                                          long long i, float2 f)
{
    const HalfPack<V> a = load_ro<V>(v_a, i);
    const HalfPack<V> b = load_ro<V>(v_b, i);
    HalfPack<V> o = a;  // every half is overwritten; the copy just initializes the words
#pragma unroll
    for (int k = 0; k < V; ++k) o.set(k, a.get(k) * f.x + b.get(k) * f.y);
    store<V>(out, i, o);
}

}  // namespace

template <int kVec, int kBlock, int kHeadsPerBlock>
__global__ void __launch_bounds__(kBlock)
merge_attn_states_lse(const __half* __restrict__ v_a, const float* __restrict__ s_a,
                      const __half* __restrict__ v_b, const float* __restrict__ s_b,
                      __half* __restrict__ out, float* __restrict__ s_out, int T, int NH, int HD)
{
    static_assert(kVec == 1 || kVec == 2 || kVec == 4 || kVec == 8, "VEC must be 1, 2, 4 or 8");
    static_assert(kHeadsPerBlock >= 1, "HEADS_PER_BLOCK must be positive");

    __shared__ float2 scale[kHeadsPerBlock];  // (w_a / w_sum, w_b / w_sum) per head of the block

    const long long heads = (long long)T * NH;
    const long long head0 = (long long)blockIdx.x * kHeadsPerBlock;
    const long long left = heads - head0;  // >= 1 with grid = ceil_div(T * NH, HEADS_PER_BLOCK)
    const int nheads = left < kHeadsPerBlock ? (int)left : kHeadsPerBlock;

    for (int h = threadIdx.x; h < nheads; h += kBlock) {
        const float sa = s_a[head0 + h];
        const float sb = s_b[head0 + h];
        const float m = fmaxf(sa, sb);
        const float wa = expf(sa - m);
        const float wb = expf(sb - m);
        const float wsum = wa + wb;  // in [1, 2] for finite inputs
        // __fdividef, not '/': the IEEE division's slow path is a subroutine call (its saved
        // registers show up as spills); with wsum in [1, 2] it is within 2 ulp.
        scale[h] = make_float2(__fdividef(wa, wsum), __fdividef(wb, wsum));
        s_out[head0 + h] = m + logf(wsum);
    }
    __syncthreads();

    const long long base = head0 * HD;  // first element of this block's heads
    const int n = nheads * HD;          // elements of this block
    const unsigned long long addr_bits =
        (unsigned long long)v_a | (unsigned long long)v_b | (unsigned long long)out;
    const bool aligned = HD % kVec == 0 && addr_bits % (kVec * sizeof(__half)) == 0;

    if (aligned) {
        const int per_head = HD / kVec;  // vectors per head
        const long long vbase = base / kVec;
        for (int i = threadIdx.x; i < n / kVec; i += kBlock)
            merge_vec<kVec>(v_a, v_b, out, vbase + i, scale[i / per_head]);
    } else {
        for (int e = threadIdx.x; e < n; e += kBlock)
            merge_vec<1>(v_a, v_b, out, base + e, scale[e / HD]);
    }
}
