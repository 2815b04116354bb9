"""Reference for the templated silu_and_mul, whose kernel takes one more scalar (T) than the
bundled example: it delegates to ../reference.py. The other templated specs use
../reference.py directly."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "_pragma_examples_reference", Path(__file__).resolve().parent.parent / "reference.py")
assert _spec is not None and _spec.loader is not None
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)


def silu_and_mul(x, d, T):
    """out = silu(x[:, :d]) * x[:, d:], x: [T, 2*d] -> [T, d]."""
    return _base.silu_and_mul(x, d).reshape(T, d)
