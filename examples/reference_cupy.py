"""CuPy references of three bundled examples, for `[reference] library = "cupy"`.

They get the inputs as float32 CuPy arrays on the GPU (the NumPy rules: fp16 and bf16 widened,
integers as int64), shaped as the spec says; `reference.py`'s NumPy code with `cp` for `np`.
"""

import cupy as cp


def _round_to_bf16(a):
    """Round float32 values to bfloat16 (to nearest even) and return them as float32."""
    bits = cp.ascontiguousarray(a, dtype=cp.float32).view(cp.uint32)
    carry = cp.uint32(0x7FFF) + ((bits >> cp.uint32(16)) & cp.uint32(1))
    rounded = (bits + carry) & cp.uint32(0xFFFF0000)
    special = (bits & cp.uint32(0x7F800000)) == cp.uint32(0x7F800000)  # NaN and Inf stay
    return cp.where(special, bits, rounded).astype(cp.uint32).view(cp.float32)


def silu_and_mul(x, d):
    """out = silu(x[:, :d]) * x[:, d:], x: [T, 2*d] -> [T, d]."""
    x = x.reshape(-1, 2 * d)
    a, b = x[:, :d], x[:, d:]
    return a / (cp.float32(1.0) + cp.exp(-a)) * b


def fused_add_rmsnorm(input, residual, weight, eps, H):
    """residual = bf16(input + residual); input = residual / rms(residual) * weight."""
    r = _round_to_bf16(input + residual).reshape(-1, H)
    r64 = r.astype(cp.float64)
    inv_rms = 1.0 / cp.sqrt((r64 * r64).sum(axis=1) / H + float(eps))
    return {"input": r64 * inv_rms[:, None] * weight.astype(cp.float64)[None, :], "residual": r}


def sgemm(A, B, M, N, K):
    """C = A @ B in float64 (cuBLAS DGEMM), A [M, K], B [K, N]."""
    return A.reshape(M, K).astype(cp.float64) @ B.reshape(K, N).astype(cp.float64)
