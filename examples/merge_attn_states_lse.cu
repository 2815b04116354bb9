// merge_attn_states_lse: merge two partial attention results by their log-sum-exp values
// (like SGLang's merge_state / vLLM's merge_attn_states):
//   m     = max(s_a, s_b)
//   w_a   = exp(s_a - m),  w_b = exp(s_b - m)
//   out   = (v_a * w_a + v_b * w_b) / (w_a + w_b)
//   s_out = m + log(w_a + w_b)
// v_a, v_b, out are [T, NH, HD] fp16; s_a, s_b, s_out are [T, NH] fp32; math in fp32.
// Deliberately naive: one thread per output element; every thread recomputes the weights
// of its (token, head) and the thread with d == 0 writes s_out.
#include <cuda_fp16.h>

extern "C" __global__ void merge_attn_states_lse(const __half* v_a,
                                                 const float* s_a,
                                                 const __half* v_b,
                                                 const float* s_b,
                                                 __half* out,
                                                 float* s_out,
                                                 int T, int NH, int HD)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long total = (long long)T * NH * HD;
    if (i >= total) return;

    const long long th = i / HD;          // flat (token, head) index
    const int d = (int)(i % HD);

    const float sa = s_a[th];
    const float sb = s_b[th];
    const float m = fmaxf(sa, sb);
    const float wa = expf(sa - m);
    const float wb = expf(sb - m);
    const float wsum = wa + wb;

    const float va = __half2float(v_a[i]);
    const float vb = __half2float(v_b[i]);
    out[i] = __float2half_rn((va * wa + vb * wb) / wsum);

    if (d == 0) s_out[th] = m + logf(wsum);
}
