"""A transformer-style block in PyTorch, as an engineer's own Python code: the reports it gives
under `ncu -o app python3 torch_block.py` are the kind users bring (cuBLAS/nvjet GEMMs,
PyTorch's elementwise, reduction and softmax kernels, long template names), not ours.

    python3 torch_block.py --variant base   # bf16 block
    python3 torch_block.py --variant new    # the same block with three changes, below

NEW changes, each a mistake seen in real code:
- the MLP's first matmul runs in fp32 (`x.float() @ w1.float()`): casts are added and the GEMM
  leaves the tensor cores;
- GELU runs on a transposed view (`h.t()`): the elementwise kernel walks a strided tensor;
- softmax over the rows' first dimension (`dim=0`) instead of the last.
Everything else is the same. Needs torch and a CUDA GPU.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

TOKENS, WIDTH, HIDDEN = 2048, 2048, 8192
ITERATIONS = 10


def block(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, gamma: torch.Tensor,
          variant: str) -> torch.Tensor:
    if variant == "new":
        h = (x.float() @ w1.float()).to(x.dtype)
        h = F.gelu(h.t()).t()
    else:
        h = F.gelu(x @ w1)
    o = h @ w2
    o = F.layer_norm(o + x, (WIDTH,), weight=gamma)
    return torch.softmax(o, dim=0 if variant == "new" else -1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("base", "new"), default="base")
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    args = parser.parse_args()
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(TOKENS, WIDTH, device=dev, dtype=dt)
    w1 = torch.randn(WIDTH, HIDDEN, device=dev, dtype=dt) / WIDTH ** 0.5
    w2 = torch.randn(HIDDEN, WIDTH, device=dev, dtype=dt) / HIDDEN ** 0.5
    gamma = torch.ones(WIDTH, device=dev, dtype=dt)
    for _ in range(args.iterations):
        out = block(x, w1, w2, gamma, args.variant)
    torch.cuda.synchronize()
    print(f"{args.variant}: {out.float().abs().mean().item():.6f}")


if __name__ == "__main__":
    main()
