"""NumPy references for the extra structural kernels (examples/moves/structural/extra/).

Each function is called with keyword arguments named as in the kernel's spec (inputs and
scalars) and returns the output array, or a dict by name when the kernel has several outputs.
They compute in float64; the caller compares in float32.
"""

import numpy as np


def _f64(a):
    return np.asarray(a, dtype=np.float64)


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
