"""NumPy references for the planted regression pairs (examples/regressions/*/).

BASE and NEW of a pair compute the same result, so one reference serves both. Each function is
called with keyword arguments named as in the pair's spec: every input array by name (flattened
or shaped; reshape before use; fp16 arrives as float32) and every scalar by name.
"""

import numpy as np


def scale_fp16(x, n):
    """vector_loads: y = 2 x + 1."""
    return 2.0 * np.asarray(x, dtype=np.float64).reshape(-1) + 1.0


def scale_2d(x, R, C):
    """strided: y = 2 x + 1 over an [R, C] matrix."""
    return 2.0 * np.asarray(x, dtype=np.float64).reshape(R, C) + 1.0


def pair_swap(x, n):
    """occupancy: y[i] = 2 x[i ^ 1] + 1, with x[n] read as 0 (odd n: the last lane pair)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    partner = np.arange(n) ^ 1
    inside = partner < n
    return 2.0 * np.where(inside, x[np.minimum(partner, n - 1)], 0.0) + 1.0


def fma_chains(x, n, iters, m, nacc):
    """spills: sum over k < nacc of (x + k + iters * ((k & 3) + 1)); exact because m == 1."""
    assert float(m) == 1.0, "the reference assumes the multiplier m is 1"
    k = np.arange(int(nacc), dtype=np.int64)
    const = int(k.sum() + int(iters) * ((k & 3) + 1).sum())
    return (int(nacc) * np.asarray(x, dtype=np.int64).reshape(-1) + const).astype(np.float32)


def chains(x, n, iters, m):
    """divergence: four chains of `iters` steps of v = v + 1 from x, x+1, x+2, x+3."""
    assert float(m) == 1.0, "the reference assumes the multiplier m is 1"
    return (4 * np.asarray(x, dtype=np.int64).reshape(-1) + 6 + 4 * int(iters)).astype(np.float32)
