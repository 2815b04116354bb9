"""NumPy references for the source-moves calibration kernels (examples/moves/).

Each function is called with keyword arguments named as in the kernel's spec (inputs and
scalars) and returns the output array (see examples/reference.py for the conventions).
"""

import numpy as np


def tile_transpose(x, M, N):
    return np.asarray(x, dtype=np.float32).reshape(M, N).T.copy()


def gmm_density(x, mu, s, w, n, K):
    x = np.asarray(x, dtype=np.float64)
    p = np.zeros_like(x)
    for m, sk, wk in zip(*(np.asarray(a, dtype=np.float64) for a in (mu, s, w)), strict=True):
        z = (x - m) / sk  # one component at a time: no [n, K] temporaries
        p += wk / (np.sqrt(2 * np.pi) * sk) * np.exp(-0.5 * z * z)
    return p


def frames_wsum(frames, w, K, C):
    frames = np.asarray(frames, dtype=np.float64).reshape(K, C)
    return np.asarray(w, dtype=np.float64) @ frames


def colsum_rows(x, R, C):
    return np.asarray(x, dtype=np.float64).reshape(R, C).sum(axis=0)


def lut_stream(code, scale, lut, n, mask):
    code = np.asarray(code).astype(np.int64) & int(mask)
    return np.asarray(scale, dtype=np.float32) * np.asarray(lut, dtype=np.float32)[code]


def affine_rows(x, gamma, beta, bias, C):
    x = np.asarray(x, dtype=np.float32).reshape(-1, C)
    return x * np.asarray(gamma, dtype=np.float32)[None, :] + \
        np.asarray(beta, dtype=np.float32)[None, :] + np.asarray(bias, dtype=np.float32)[:, None]


def axpby_fixed_grid(y, x, a, b, n):
    return float(a) * np.asarray(x, dtype=np.float64) + float(b) * np.asarray(y, dtype=np.float64)
