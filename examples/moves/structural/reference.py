"""NumPy references for the structural calibration pairs (examples/moves/structural/).

Each function is called with keyword arguments named as in the kernel's spec (inputs and
scalars; fp16 inputs arrive as float32) and returns the output array, or a dict by name when
the kernel has several outputs. They compute in float64; the caller compares in float32.
"""

import numpy as np


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def gelu_tanh(x, n):
    x = _f64(x)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x * x * x)))


def scale_bias_rows(x, gamma, beta, R, C):
    return _f64(x).reshape(R, C) * _f64(gamma)[None, :] + _f64(beta)[None, :]


def layernorm_stats(x, gamma, beta, N, C, eps):
    x = _f64(x).reshape(N, C)
    mean = x.mean(axis=1)
    xc = x - mean[:, None]
    rstd = 1.0 / np.sqrt((xc * xc).mean(axis=1) + float(eps))
    out = xc * rstd[:, None] * _f64(gamma)[None, :] + _f64(beta)[None, :]
    return {"out": out, "mean": mean, "rstd": rstd}


def rmsnorm_rows(x, w, N, C, eps):
    x = _f64(x).reshape(N, C)
    inv = 1.0 / np.sqrt((x * x).mean(axis=1) + float(eps))
    return x * inv[:, None] * _f64(w)[None, :]


def softmax_rows(x, N, C):
    x = _f64(x).reshape(N, C)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def lse_vocab(logits, N, V):
    x = _f64(logits).reshape(N, V)
    m = x.max(axis=1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=1))


def embed_tok_pos(tokens, wte, wpe, B, T, C):
    tok = np.asarray(tokens).reshape(B, T).astype(np.int64)
    wte = _f64(wte).reshape(-1, C)
    return wte[tok] + _f64(wpe).reshape(T, C)[None, :, :]


def gather_rows(src, idx, K, C):
    return np.asarray(src, dtype=np.float32).reshape(-1, C)[np.asarray(idx).astype(np.int64)]


def bias_grad(dout, N, C):
    return _f64(dout).reshape(N, C).sum(axis=0)


def col_mean_var(x, N, C):
    x = _f64(x).reshape(N, C)
    return {"mean": x.mean(axis=0), "var": x.var(axis=0)}
