"""NumPy references for the extra structural kernels (examples/moves/structural/extra/).

Each function is called with keyword arguments named as in the kernel's spec (inputs, in/out
arrays and scalars; fp16 inputs arrive as float32) and returns the output array. They compute
in float64 where the kernel computes; the caller compares in the output's dtype.
"""

import numpy as np


def _f64(a):
    return np.asarray(a, dtype=np.float64)


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
