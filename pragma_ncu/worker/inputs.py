"""The inputs a worker draws on the host: each array's values from its `init` distribution,
seeded per array. The CPU worker fills its arrays with them; the spec's reference check
(`reference.check_reference`) calls a reference on them before anything runs. The GPU worker
draws the same distributions on the device (harness.cu), with the same per-array seeds."""

from __future__ import annotations

import numpy as np

from pragma_ncu.spec import dtypes
from pragma_ncu.spec.model import ResolvedArg


def array_seed(seed: int, index: int) -> int:
    """The seed of the `index`-th array of a request seeded `seed` (the GPU worker's too), so
    that each array gets a stream of its own."""
    return seed * 1_000_003 + index


def generate(arg: ResolvedArg, seed: int) -> np.ndarray:
    """`a.numel` values from a's init distribution; the GPU worker's defaults when it has none."""
    rng = np.random.default_rng(seed & 0xFFFFFFFFFFFFFFFF)
    is_float = arg.dtype.startswith(("fp", "bf"))
    dist, lo, hi = arg.init or (("normal", 0.0, 1.0) if is_float else ("randint", 0, 100))
    work = np.float64 if arg.dtype == "fp64" else np.float32
    if dist == "normal":
        return rng.standard_normal(arg.numel, dtype=work) * work(hi) + work(lo)
    if dist == "uniform":
        return rng.random(arg.numel, dtype=work) * work(hi - lo) + work(lo)
    if dist == "randint":  # [lo, hi) like the harness; out-of-range values wrap like a C cast
        values = rng.integers(int(lo), int(max(hi, lo + 1)), arg.numel, dtype=np.int64)
        return values.astype(_storage(arg.dtype)) if not is_float else values
    raise ValueError(f"{arg.name}: unknown init distribution {dist!r}; use normal, uniform "
                     "or randint")


def stored(arg: ResolvedArg, values: np.ndarray) -> np.ndarray:
    """Drawn `values` as the array's storage holds them (bf16 as its bit patterns)."""
    if arg.dtype == "bf16":
        return dtypes.f32_to_bf16(values.astype(np.float32))
    return values.astype(_storage(arg.dtype))


def drawn(args: tuple[ResolvedArg, ...], seed: int) -> dict[str, np.ndarray]:
    """Every input and inout of `args` as a worker draws it for `seed`, stored and shaped."""
    arrays = [a for a in args if a.role != "scalar"]
    return {a.name: stored(a, generate(a, array_seed(seed, i))).reshape(a.shape)
            for i, a in enumerate(arrays) if a.role in ("input", "inout")}


def _storage(dtype: str) -> np.dtype:
    found = dtypes.lookup(dtype)
    if found is None:
        raise KeyError(f"unknown dtype {dtype!r}; known: {', '.join(dtypes.dtype_names())}")
    return found.numpy_storage
