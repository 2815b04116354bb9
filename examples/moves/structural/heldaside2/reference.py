"""NumPy references for the second held-aside structural set (moves/structural/heldaside2/).

Each function is called with keyword arguments named as in the kernel's spec (inputs and
scalars; bf16 inputs arrive as float32 holding the bf16 values) and returns the output array,
or a dict by name when the kernel has several outputs. They compute in float64; the caller
compares in the output's dtype (float32 for float outputs, int64 for integer ones).
"""

import numpy as np


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def bias_quickgelu_bf16(x, bias, R, C):
    v = _f64(x).reshape(R, C) + _f64(bias).reshape(1, C)
    return v / (1.0 + np.exp(-1.702 * v))


def tanh_gate(a, g, R, C):
    a = _f64(a).reshape(R, C)
    g = _f64(g).reshape(R, C)
    return np.tanh(a) / (1.0 + np.exp(-g))


def l2norm_heads(x, R, D, eps):
    x = _f64(x).reshape(R, D)
    nrm = np.sqrt((x * x).sum(axis=1))
    return x / np.maximum(nrm, float(eps))[:, None]


def instnorm_affine(x, gamma, beta, N, C, HW, eps):
    x = _f64(x).reshape(N, C, HW)
    mean = x.mean(axis=2, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=2, keepdims=True)
    y = (x - mean) / np.sqrt(var + float(eps))
    return y * _f64(gamma).reshape(1, C, 1) + _f64(beta).reshape(1, C, 1)


def causal_softmax(s, BH, T, scale):
    s = _f64(s).reshape(BH, T, T) * float(scale)
    visible = np.tril(np.ones((T, T), dtype=bool))  # query q sees keys 0..q
    s = np.where(visible[None, :, :], s, -np.inf)
    e = np.exp(s - s.max(axis=2, keepdims=True))
    return (e / e.sum(axis=2, keepdims=True)).reshape(BH * T, T)


def bag_mean(idx, table, B, K, D):
    rows = np.asarray(idx).reshape(B, K).astype(np.int64)
    table = _f64(table).reshape(-1, D)
    return table[rows].mean(axis=1)


def maxpool_tokens(x, B, T, C):
    x = np.asarray(x, dtype=np.float32).reshape(B, T, C)
    # np.argmax gives the first of equal maxima, as the kernels do.
    return {"vmax": x.max(axis=1), "arg": x.argmax(axis=1).astype(np.int64)}


def ln_wgrad(dy, xhat, N, C):
    dy = _f64(dy).reshape(N, C)
    xhat = _f64(xhat).reshape(N, C)
    return {"dgamma": (dy * xhat).sum(axis=0), "dbeta": dy.sum(axis=0)}
