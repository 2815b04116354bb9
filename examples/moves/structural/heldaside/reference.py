"""NumPy references for the held-aside structural pairs (examples/moves/structural/heldaside/).

Each function is called with keyword arguments named as in the kernel's spec (inputs and
scalars; fp16 inputs arrive as float32) and returns the output array. They compute in float64;
the caller compares in float32.
"""

import numpy as np


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def residual_add_half(x, res, n):
    return _f64(x) + _f64(res)


def silu_mul(x, R, C):
    x = _f64(x).reshape(R, 2 * C)
    a, b = x[:, :C], x[:, C:]
    return a / (1.0 + np.exp(-a)) * b


def rmsnorm_half(x, w, N, C, eps):
    x = _f64(x).reshape(N, C)
    inv = 1.0 / np.sqrt((x * x).mean(axis=1) + float(eps))
    return x * inv[:, None] * _f64(w)[None, :]


def log_softmax_rows(x, N, C):
    x = _f64(x).reshape(N, C)
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def gather_scale_rows(table, ids, scale, K, C):
    rows = _f64(table).reshape(-1, C)[np.asarray(ids).astype(np.int64)]
    return rows * _f64(scale)[:, None]


def col_absmax(x, N, C):
    return np.abs(_f64(x).reshape(N, C)).max(axis=0)
