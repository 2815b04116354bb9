"""NumPy references for the bundled example kernels.

Each function is called with keyword arguments named as in the kernel's spec: every
input and inout array by name (fp16 and bf16 arrays arrive as float32) and every scalar
by name. It returns the single output array, or a dict keyed by argument name when the
kernel has several outputs/inouts. Math is done in float32 or float64.
"""

import numpy as np


def _round_to_bf16(a):
    """Round float32 values to bfloat16 (round to nearest even) and return them as float32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    bits = a.view(np.uint32)
    # Add 0x7FFF plus the lowest kept bit, then truncate the low 16 bits.
    carry = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    rounded = (bits + carry) & np.uint32(0xFFFF0000)
    # Leave NaN/Inf untouched (the carry could otherwise turn a NaN payload into Inf).
    rounded = np.where((bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000), bits, rounded)
    return rounded.astype(np.uint32).view(np.float32)


def silu_and_mul(x, d):
    """out = silu(x[:, :d]) * x[:, d:], x: [T, 2*d] -> [T, d]."""
    x = np.asarray(x, dtype=np.float32).reshape(-1, 2 * d)
    a = x[:, :d]
    b = x[:, d:]
    return a / (np.float32(1.0) + np.exp(-a)) * b


def fused_add_rmsnorm(input, residual, weight, eps, H):
    """residual = bf16(input + residual); input = residual / rms(residual) * weight."""
    s = np.asarray(input, dtype=np.float32) + np.asarray(residual, dtype=np.float32)
    r = _round_to_bf16(s).reshape(-1, H)
    r64 = r.astype(np.float64)
    ms = np.einsum("th,th->t", r64, r64) / H
    inv_rms = 1.0 / np.sqrt(ms + float(eps))
    out = r64 * inv_rms[:, None] * np.asarray(weight, dtype=np.float64)[None, :]
    return {"input": out, "residual": r}


def merge_attn_states_lse(v_a, s_a, v_b, s_b, T, NH, HD):
    """Merge two partial attention outputs [T, NH, HD] by their LSE values [T, NH]."""
    s_a = np.asarray(s_a, dtype=np.float64).reshape(T, NH)
    s_b = np.asarray(s_b, dtype=np.float64).reshape(T, NH)
    m = np.maximum(s_a, s_b)
    w_a = np.exp(s_a - m)
    w_b = np.exp(s_b - m)
    w_sum = w_a + w_b
    v_a = np.asarray(v_a, dtype=np.float32).reshape(T, NH, HD)
    v_b = np.asarray(v_b, dtype=np.float32).reshape(T, NH, HD)
    f_a = (w_a / w_sum).astype(np.float32)[:, :, None]
    f_b = (w_b / w_sum).astype(np.float32)[:, :, None]
    out = v_a * f_a + v_b * f_b
    s_out = m + np.log(w_sum)
    return {"out": out, "s_out": s_out}


def softmax(x, C):
    """Row softmax over the last dim of x [R, C]."""
    x = np.asarray(x, dtype=np.float64).reshape(-1, C)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    e /= e.sum(axis=1, keepdims=True)
    return e


def layernorm(x, gamma, beta, eps, H):
    """LayerNorm over the last dim of x [T, H] with biased variance."""
    x = np.asarray(x, dtype=np.float64).reshape(-1, H)
    mean = x.mean(axis=1, keepdims=True)
    xc = x - mean
    var = np.einsum("th,th->t", xc, xc)[:, None] / H
    xc *= 1.0 / np.sqrt(var + float(eps))
    return xc * np.asarray(gamma, dtype=np.float64) + np.asarray(beta, dtype=np.float64)


def max_reduce(x, C):
    """y[r] = max over the last dim of x [R, C]."""
    return np.asarray(x).reshape(-1, C).max(axis=1)


def transpose(x, M, N):
    """y = x.T for x [M, N]."""
    return np.ascontiguousarray(np.asarray(x).reshape(M, N).T)


def sgemm(A, B, M, N, K):
    """C = A @ B in float64, A [M, K], B [K, N]."""
    A = np.asarray(A, dtype=np.float64).reshape(M, K)
    B = np.asarray(B, dtype=np.float64).reshape(K, N)
    return A @ B
