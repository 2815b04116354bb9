"""The reference of masked_bias_scale (masked_bias_scale.cu), drafted by `pragma-ncu init`.

pragma-ncu calls it with keyword arguments: every input and inout array by its name, as NumPy
arrays shaped as the spec says, in higher precision than the kernel (fp16 and bf16 as float32,
integers as int64), and every scalar by its name. It returns the outputs: the array itself for
one output, else a dict keyed by name. Compute in at least float32 (float64 for sums over many
terms). See docs/spec-format.md.
"""

import numpy as np


def masked_bias_scale(*, kept, x, bias, mask, scale, rows, cols):
    """out, kept of masked_bias_scale."""
    keep = mask != 0
    out = np.where(keep, (x + bias[None, :]) * np.float32(scale), np.float32(0.0))
    return {"out": out, "kept": kept + keep.sum(axis=1)}
