"""NumPy reference shared by the planted-fault examples: y = 2 * x + 1 (fp32)."""

import numpy as np


def scale(x, n):
    """y = 2 * x + 1 over the n elements of x, computed in float64."""
    assert x.size == n
    return 2.0 * x.astype(np.float64) + 1.0
