"""NumPy references for the planted-bottleneck kernels (examples/planted/*.cu).

Each function is called with keyword arguments named as in the kernel's spec: every input and
inout array by name (flattened or shaped; reshape before use) and every scalar by name. Integer
kernels are checked exactly; the FMA kernels keep every value an exact integer below 2^24, so
they are exact too; only sfu_bound (approximate __sinf/__expf) needs a tolerance.
"""

import numpy as np

_U32 = np.uint64(0xFFFFFFFF)


def uncoalesced(x, R, C):
    """y[r] = sum_j x[r, j]."""
    return np.asarray(x, dtype=np.int64).reshape(R, C).sum(axis=1)


def bank_conflicts(x, M, N):
    """Per 32x32 tile T of x (zero-padded at the edges): y_tile[a, b] = sum_k T[a, k] * T[b, k]."""
    mt, nt = -(-M // 32), -(-N // 32)
    xp = np.zeros((mt * 32, nt * 32), dtype=np.float64)  # exact: sums stay below 2^53
    xp[:M, :N] = np.asarray(x, dtype=np.float64).reshape(M, N)
    tiles = xp.reshape(mt, 32, nt, 32).transpose(0, 2, 1, 3)  # [mt, nt, a, k]
    gram = tiles @ tiles.swapaxes(-1, -2)                    # [mt, nt, a, b]
    y = gram.transpose(0, 2, 1, 3).reshape(mt * 32, nt * 32)[:M, :N]
    return np.rint(y).astype(np.int64)


def register_pressure(table, n, rows_mask, steps, nacc):
    """Replay every warp's dependent walk over the 32-int rows of `table`.

    Warp w starts at row (w * 40503) & rows_mask; at step s lane l reads v = table[p, l],
    folds it into accumulator s % nacc (acc = acc * 31 + v, mod 2^32) and the walk moves to
    row (p * 1103515245 + v[lane 0] + 12345) & rows_mask. The output hashes the accumulators.
    """
    rows = np.asarray(table).reshape(-1, 32).astype(np.uint32)
    warps = -(-n // 32)
    mask = np.int64(rows_mask)
    p = (np.arange(warps, dtype=np.int64) * 40503) & mask
    lane = np.arange(32, dtype=np.uint32)
    acc = (lane[None, None, :] + np.arange(nacc, dtype=np.uint32)[:, None, None]
           + np.zeros((nacc, warps, 1), dtype=np.uint32))          # [nacc, warps, 32]
    for s in range(steps):
        v = rows[p]                                                # [warps, 32]
        k = s % nacc
        acc[k] = acc[k] * np.uint32(31) + v                        # uint32 arithmetic wraps
        p = (p * 1103515245 + v[:, 0].astype(np.int64) + 12345) & mask
    h = np.zeros((warps, 32), dtype=np.uint32)
    for k in range(nacc):
        h ^= acc[k] * np.uint32(2 * k + 1)
    return (h.reshape(-1)[:n] & np.uint32(0x0FFFFFFF)).astype(np.int64)


# What each divergent path adds to v after `iters` steps (m = 1): path -> f(iters).
_PATH_ADD = (
    lambda i: i, lambda i: 2 * i, lambda i: 3 * i, lambda i: 4 * i,
    lambda i: 10 * (-(-i // 2)), lambda i: 6 * i, lambda i: 7 * i, lambda i: 8 * i,
)


def divergence(x, n, iters, m):
    """y[i] = x[i] + (what path i % 8 adds in `iters` steps); exact because m == 1."""
    assert float(m) == 1.0, "the reference assumes the multiplier m is 1"
    x = np.asarray(x, dtype=np.int64).reshape(-1)
    add = np.array([f(int(iters)) for f in _PATH_ADD], dtype=np.int64)
    return (x + add[np.arange(n) % 8]).astype(np.float32)


def small_grid(x, n, iters, m):
    """y = x + iters (iters steps of v = v * 1 + 1)."""
    assert float(m) == 1.0, "the reference assumes the multiplier m is 1"
    return (np.asarray(x, dtype=np.int64).reshape(-1) + int(iters)).astype(np.float32)


def fma_bound(x, n, iters, m):
    """y = sum_{k=0..7} (x + iters * (k + 1)) = 8 x + 36 iters."""
    assert float(m) == 1.0, "the reference assumes the multiplier m is 1"
    return (8 * np.asarray(x, dtype=np.int64).reshape(-1) + 36 * int(iters)).astype(np.float32)


def sfu_bound(x, n, iters):
    """Sum over k = 0..3 of `iters` steps of v = exp(0.5 sin(v) + 0.1 x - 1 - 0.05 k), v0 = 0.5.

    The map is a contraction (factor <= 0.34 for x in [-1, 1]), so the float64 iterate reaches
    its fixed point within ~40 steps; stopping once it no longer changes is exact.
    """
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    c = (0.1 * x - 1.0)[None, :] - 0.05 * np.arange(4, dtype=np.float64)[:, None]  # [4, n]
    v = np.full_like(c, 0.5)
    for _ in range(int(iters)):
        nxt = np.exp(0.5 * np.sin(v) + c)
        if np.array_equal(nxt, v):
            break
        v = nxt
    return v.sum(axis=0)


def bandwidth_ok(x, n):
    """y = 2 x + 1."""
    return 2.0 * np.asarray(x, dtype=np.float64).reshape(-1) + 1.0


def atomics(hist, key, n):
    """hist + the counts of each key."""
    hist = np.asarray(hist, dtype=np.int64).reshape(-1)
    counts = np.bincount(np.asarray(key, dtype=np.int64).reshape(-1), minlength=hist.size)
    return hist + counts[: hist.size]


def barrier(x, n, steps, k, seed):
    """y[i] = (x[i] + sum over steps of chain value of lane i % 32) mod 2^28.

    Lane l's chain starts at seed + l * 0x9E3779B9 and takes k rounds of
    v = v * 2654435761 + (v >> 15) (mod 2^32) per step; its value after each step is summed.
    """
    v = (np.uint64(seed) + np.arange(32, dtype=np.uint64) * np.uint64(0x9E3779B9)) & _U32
    total = np.zeros(32, dtype=np.uint64)
    for _ in range(int(steps)):
        for _ in range(int(k)):
            v = (v * np.uint64(2654435761) + (v >> np.uint64(15))) & _U32
        total = (total + v) & _U32
    x = np.asarray(x, dtype=np.uint64).reshape(-1)
    y = (x + total[np.arange(n) % 32]) & np.uint64(0x0FFFFFFF)
    return y.astype(np.int64)
