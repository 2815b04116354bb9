"""NumPy references of the CPU examples (float64 on the inputs as given)."""

import numpy as np


def conv1d(x, w, n, k):
    # "valid" correlation: y[i] = sum_j x[i + j] * w[j]
    return {"y": np.correlate(x.astype(np.float64), w.astype(np.float64), mode="valid")}
