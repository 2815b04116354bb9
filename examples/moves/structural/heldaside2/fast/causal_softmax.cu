// causal_softmax_fast: causally masked softmax of attention scores, rows of T (query q = i % T
// sees keys 0..q; the rest of the row is 0).
// Hand-written fast version of ../causal_softmax.cu: a warp per row (8 rows per 256-thread
// block). The visible part of the row is read once with float4 loads (after peeling the
// elements before the first 16-byte boundary), each lane keeping a running (max, sum of
// exp2) that it rescales when its max grows; the lanes' pairs merge by xor shuffles. A second
// pass re-reads the visible part (L1/L2 hits) and writes p with float4 stores, and writes the
// masked tail as zeros without loading it. exp is taken as exp2 of the score times
// scale * log2(e). Rows whose s and p addresses differ mod 16 take the scalar loops.
#include <stdint.h>

#define ROWS 8
#define LOG2E 1.4426950408889634f

// (m, l): the lane's max and its sum of exp2(v - m).
static __device__ __forceinline__ void add1(float& m, float& l, float v)
{
    const float mn = fmaxf(m, v);
    l = l * exp2f(m - mn) + exp2f(v - mn);
    m = mn;
}

static __device__ __forceinline__ void add4(float& m, float& l, float a, float b, float c, float d)
{
    // a is always visible; b, c, d may be -INFINITY (masked)
    const float mn = fmaxf(m, fmaxf(fmaxf(a, b), fmaxf(c, d)));
    l = l * exp2f(m - mn) + (exp2f(a - mn) + exp2f(b - mn)) + (exp2f(c - mn) + exp2f(d - mn));
    m = mn;
}

static __device__ __forceinline__ void merge(float& m, float& l, float m2, float l2)
{
    const float mn = fmaxf(m, m2);
    if (mn == -INFINITY)
        return;                               // neither side has seen a key
    l = l * exp2f(m - mn) + l2 * exp2f(m2 - mn);
    m = mn;
}

extern "C" __global__ void __launch_bounds__(256)
causal_softmax_fast(const float* __restrict__ s, float* __restrict__ p, int BH, int T, float scale)
{
    const int lane = threadIdx.x & 31;
    const long long i = (long long)blockIdx.x * ROWS + (threadIdx.x >> 5);
    if (i >= (long long)BH * T)
        return;                               // the whole warp
    const int q = (int)(i % T);
    const float* srow = s + i * T;
    float* prow = p + i * T;
    const float k = scale * LOG2E;

    // [0, head) scalar, nv float4s from head, [tail, T) scalar.
    const uintptr_t sa = reinterpret_cast<uintptr_t>(srow);
    const uintptr_t pa = reinterpret_cast<uintptr_t>(prow);
    int head = T;
    if (((sa ^ pa) & 15) == 0 && (sa & 3) == 0)
        head = min(T, (int)(((16 - (sa & 15)) & 15) >> 2));
    const int nv = (T - head) >> 2;
    const int tail = head + (nv << 2);
    const float4* s4 = reinterpret_cast<const float4*>(srow + head);
    float4* p4 = reinterpret_cast<float4*>(prow + head);
    const int nvis = q < head ? 0 : min(nv, ((q - head) >> 2) + 1);   // float4s with a visible key

    float m = -INFINITY, l = 0.0f;
    for (int j = lane; j < head && j <= q; j += 32)
        add1(m, l, srow[j] * k);
#pragma unroll 4
    for (int v = lane; v < nvis; v += 32) {
        const float4 a = s4[v];
        const int j = head + 4 * v;
        add4(m, l, a.x * k, j + 1 <= q ? a.y * k : -INFINITY, j + 2 <= q ? a.z * k : -INFINITY,
             j + 3 <= q ? a.w * k : -INFINITY);
    }
    for (int j = tail + lane; j <= q; j += 32)
        add1(m, l, srow[j] * k);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        const float l2 = __shfl_xor_sync(0xffffffffu, l, o);
        merge(m, l, m2, l2);
    }
    const float inv = 1.0f / l;

    for (int j = lane; j < head; j += 32)
        prow[j] = j <= q ? exp2f(srow[j] * k - m) * inv : 0.0f;
#pragma unroll 4
    for (int v = lane; v < nv; v += 32) {
        const int j = head + 4 * v;
        float4 r = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (j <= q) {
            const float4 a = s4[v];
            r.x = exp2f(a.x * k - m) * inv;
            if (j + 1 <= q)
                r.y = exp2f(a.y * k - m) * inv;
            if (j + 2 <= q)
                r.z = exp2f(a.z * k - m) * inv;
            if (j + 3 <= q)
                r.w = exp2f(a.w * k - m) * inv;
        }
        p4[v] = r;
    }
    for (int j = tail + lane; j < T; j += 32)
        prow[j] = j <= q ? exp2f(srow[j] * k - m) * inv : 0.0f;
}
