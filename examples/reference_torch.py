"""PyTorch references of three bundled examples, for `[reference] library = "torch"`.

They get the inputs as float32 CUDA tensors (the NumPy rules: fp16 and bf16 widened, integers
as int64), shaped as the spec says, and run on the GPU inside the worker; what they return is
compared with the kernel's outputs exactly as a NumPy reference's would be. They compute what
`reference.py` computes, written as a model's code would be (F.silu, torch.rsqrt).
"""

import torch
import torch.nn.functional as F


def silu_and_mul(x, d):
    """out = silu(x[:, :d]) * x[:, d:], x: [T, 2*d] -> [T, d]."""
    x = x.reshape(-1, 2 * d)
    return F.silu(x[..., :d]) * x[..., d:]


def fused_add_rmsnorm(input, residual, weight, eps, H):
    """residual = bf16(input + residual); input = residual / rms(residual) * weight."""
    r = (input + residual).to(torch.bfloat16).float().reshape(-1, H)  # rounded like the kernel
    r64 = r.double()
    inv_rms = torch.rsqrt(r64.square().mean(dim=1, keepdim=True) + float(eps))
    return {"input": r64 * inv_rms * weight.double(), "residual": r}


def sgemm(A, B, M, N, K):
    """C = A @ B in float64 (cuBLAS DGEMM), A [M, K], B [K, N]."""
    return A.reshape(M, K).double() @ B.reshape(K, N).double()
