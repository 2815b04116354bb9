"""NumPy references for the held-out source-moves kernels (examples/moves/heldout/)."""

import math

import numpy as np


def sinusoid_embed(P, D):
    d = np.arange(D)
    freq = np.power(np.float32(10000.0), -(2 * (d // 2)).astype(np.float32) / np.float32(D))
    angle = (np.arange(P, dtype=np.float32)[:, None] * freq[None, :].astype(np.float32))
    angle = angle.astype(np.float64)  # the kernel's float32 angle, then sin/cos exactly
    return np.where(d[None, :] % 2 == 1, np.cos(angle), np.sin(angle))


def conv1d_accum(x, w, n, T):
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    return np.correlate(x, w, mode="valid")[:n]


def block_matvec(A, v, B):
    A = np.asarray(A, dtype=np.float64).reshape(B, 32, 32)
    v = np.asarray(v, dtype=np.float64).reshape(B, 32)
    return np.einsum("brk,bk->br", A, v)


def student_t(x, n, nu, mu, sigma):
    x = np.asarray(x, dtype=np.float64)
    nu, mu, sigma = float(nu), float(mu), float(sigma)
    c = (math.lgamma(0.5 * (nu + 1)) - math.lgamma(0.5 * nu) - 0.5 * math.log(nu * math.pi)
         - math.log(sigma))
    z = (x - mu) / sigma
    return c - 0.5 * (nu + 1) * np.log1p(z * z / nu)


def channel_moments(x, P, C):
    x = np.asarray(x, dtype=np.float64).reshape(P, C)
    mean = x.mean(axis=0)
    return {"mean": mean, "var": (x * x).mean(axis=0) - mean * mean}


def atx_columns(A, x, M, N):
    A = np.asarray(A, dtype=np.float64).reshape(M, N)
    return A.T @ np.asarray(x, dtype=np.float64)


def feature_amax(x, B, F):
    amax = np.abs(np.asarray(x, dtype=np.float64).reshape(B, F)).max(axis=0)
    return np.where(amax > 0, amax / 127.0, 1.0)
