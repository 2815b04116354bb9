"""Library-heavy steps in CuPy, as an engineer's own Python code: under
`ncu --profile-from-start off -o app python3 cupy_steps.py --app NAME --variant base|new` they
give the reports users bring when a library, not their code, picks the kernels (cuBLAS GEMMs,
cub and CuPy reductions, cuFFT, CuPy's element-wise kernels). Only the timed iterations are
profiled (cudaProfilerStart/Stop around them); a warm-up iteration compiles CuPy's kernels first.

Each application's NEW differs from its BASE by one change a user makes without touching a
kernel, after which the library answers the same call with another kernel:
- mlp: a two-GEMM MLP step with ReLU and a loss reduction; NEW feeds the second GEMM the
  activation transposed through an extra copy (`ascontiguousarray(h.T).T`), so cuBLAS sees
  another layout.
- reduce: a row softmax and row norms over a large matrix; NEW turns CuPy's cub accelerator on
  for reductions (BASE runs CuPy's own reduction kernels).
- precision: a chain of three square GEMMs with a bias; NEW runs them in fp16 (casts added,
  the GEMMs on tensor cores).
- fft: a spectral filter (rfft, multiply, irfft) of a batch of signals; NEW's signals are one
  sample longer (an odd length: cuFFT chooses another algorithm).
Needs cupy and a CUDA GPU.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import cupy as cp

Step = Callable[[], object]

ITERATIONS = 5


def mlp(variant: str) -> Step:
    rng = cp.random.default_rng(0)
    x = rng.standard_normal((2048, 1024), dtype=cp.float32)
    w1 = rng.standard_normal((1024, 4096), dtype=cp.float32) / 32
    w2 = rng.standard_normal((4096, 1024), dtype=cp.float32) / 64

    def step() -> object:
        h = cp.maximum(x @ w1, 0)
        if variant == "new":
            h = cp.ascontiguousarray(h.T).T
        y = h @ w2
        return (y * y).sum(axis=1).mean()
    return step


def reduce(variant: str) -> Step:
    from cupy._core import _accelerator
    accelerators = ["cub"] if variant == "new" else []
    _accelerator.set_reduction_accelerators(accelerators)
    _accelerator.set_routine_accelerators(accelerators)
    x = cp.random.default_rng(1).standard_normal((8192, 4096), dtype=cp.float32)

    def step() -> object:
        e = cp.exp(x - x.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        return cp.sqrt((p * p).sum(axis=1)).sum()
    return step


def precision(variant: str) -> Step:
    rng = cp.random.default_rng(2)
    dtype = cp.float16 if variant == "new" else cp.float32
    x = rng.standard_normal((4096, 4096), dtype=cp.float32)
    ws = [rng.standard_normal((4096, 4096), dtype=cp.float32) / 64 for _ in range(3)]
    bias = rng.standard_normal(4096, dtype=cp.float32)

    def step() -> object:
        h = x
        for w in ws:
            h = h.astype(dtype) @ w.astype(dtype)
            h = h.astype(cp.float32) + bias
        return h.mean()
    return step


def fft(variant: str) -> Step:
    n = (1 << 16) + (1 if variant == "new" else 0)
    rng = cp.random.default_rng(3)
    signals = rng.standard_normal((256, n), dtype=cp.float32)
    taper = cp.exp(-cp.arange(n // 2 + 1, dtype=cp.float32) / 4096)

    def step() -> object:
        spectrum = cp.fft.rfft(signals, axis=1)
        return cp.fft.irfft(spectrum * taper, n=n, axis=1).std()
    return step


APPS = {"mlp": mlp, "reduce": reduce, "precision": precision, "fft": fft}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", choices=sorted(APPS), required=True)
    parser.add_argument("--variant", choices=("base", "new"), default="base")
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    args = parser.parse_args()
    step = APPS[args.app](args.variant)
    out = step()  # warm-up: CuPy compiles its kernels on first use
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.profilerStart()
    for _ in range(args.iterations):
        out = step()
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.profilerStop()
    print(f"{args.app} {args.variant}: {float(out):.6f}")


if __name__ == "__main__":
    main()
