"""A test-only target, "toy", added the way any target is: this one folder, and one call of
`pragma_ncu.backends.register(TARGET)`. Nothing in pragma_ncu names it.

A toy kernel (`foo.toy`) is Python: lines `name = expression` over the spec's arrays (NumPy),
its scalars and its parameters, that set every output and `cost_us`, what one call costs under
the toy's cost model. The toy's evaluator runs it in this process, checks the outputs against
the kernel at its defaults, and reports `cost_us` as the measured time; its collector,
"toycount", records a few metrics of one call; its one diagnosis rule names the per-block
overhead. `target` holds the Target, `session` what the loop and the search use, `evaluator`,
`collect` and `diagnosis` the rest, as in pragma_ncu/backends/<target>/. The `toy` fixture
(tests/conftest.py) registers it for one test.
"""

from pathlib import Path

from tests.fakes.toy_backend.target import TARGET

KERNELS = Path(__file__).resolve().parent / "kernels"  # scale.toy and its spec

__all__ = ["KERNELS", "TARGET"]
