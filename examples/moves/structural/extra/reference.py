"""NumPy references for the extra structural kernels (examples/moves/structural/extra/).

Each function is called with keyword arguments named as in the kernel's spec (inputs and
scalars) and returns the output array, or a dict by name when the kernel has several outputs.
They compute in float64; the caller compares in float32.
Each function is called with keyword arguments named as in the kernel's spec (inputs, in/out
arrays and scalars; fp16 inputs arrive as float32) and returns the output array. They compute
in float64 where the kernel computes; the caller compares in the output's dtype.
"""

import numpy as np


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def sgemm_rowx(A, B, M, N, K):
    return _f64(A).reshape(M, K) @ _f64(B).reshape(K, N)


def colbias_flat(x, bias, scale, R, C):
    return _f64(x).reshape(R, C) * float(scale) + _f64(bias)[None, :]


def ger_rank1(A, u, v, alpha, M, N):
    return _f64(A).reshape(M, N) + float(alpha) * np.outer(_f64(u), _f64(v))


def grad_mag_flat(x, H, W):
    x = _f64(x).reshape(H, W)
    dx = np.zeros_like(x)
    dy = np.zeros_like(x)
    dx[:, :-1] = x[:, 1:] - x[:, :-1]
    dy[:-1, :] = x[1:, :] - x[:-1, :]
    return np.sqrt(dx * dx + dy * dy)


def chan_affine_2d(src, gamma, beta, N, C):
    return _f64(src).reshape(N, C) * _f64(gamma)[None, :] + _f64(beta)[None, :]


def row_absmax_scale(x, rows, cols):
    x = _f64(x).reshape(rows, cols)
    amax = np.abs(x).max(axis=1)
    return {"q": x * (127.0 / amax)[:, None], "scale": amax / 127.0}


def col_l2_blocks(x, rows, cols):
    x = _f64(x).reshape(rows, cols)
    return np.sqrt((x * x).sum(axis=0))


def row_center_var(x, n_rows, n_cols):
    return _f64(x).reshape(n_rows, n_cols).var(axis=1)


def col_min_blocks(a, nrows, ncols):
    return _f64(a).reshape(nrows, ncols).min(axis=0)
# --- smem_tile's kernels ----------------------------------------------------------------------

def transpose_affine(w, bias, alpha, R, C):
    return float(alpha) * _f64(w).reshape(R, C).T + _f64(bias)[:, None]


def nchw_to_nhwc_half(x, C, HW):
    x = np.asarray(x, dtype=np.float32).reshape(-1, int(C), int(HW))
    return np.ascontiguousarray(x.transpose(0, 2, 1))


def add_transposed(a, b, M, N):
    return _f64(a).reshape(M, N) + _f64(b).reshape(N, M).T


def grad_transpose_accum(g, dw, scale, M, N):
    return _f64(dw).reshape(N, M) + float(scale) * _f64(g).reshape(M, N).T


def transpose_u8_pitched(src, dst, H, W, pitch_in, pitch_out):
    H, W, pi, po = int(H), int(W), int(pitch_in), int(pitch_out)
    out = np.array(dst, dtype=np.int64).reshape(W, po)
    out[:, :H] = np.asarray(src, dtype=np.int64).reshape(H, pi)[:, :W].T
    return out
