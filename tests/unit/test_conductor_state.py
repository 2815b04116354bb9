"""The roofline fraction a state carries, on the bytes the kernel moves: a profile that
measured fewer DRAM bytes than the spec's arrays hold (a gather reading some rows of a table)
lowers a memory-bound fraction in proportion; more bytes, a compute bound, or a profile without
the DRAM counters leave it."""

from __future__ import annotations

import pytest

from pragma_ncu.conductor.state import moved_fraction
from pragma_ncu.measure.roofline import MEMORY
from pragma_ncu.profile.profiles import KernelProfile, Metric


def _kernel(read: float | None, written: float | None) -> KernelProfile:
    metrics = {name: Metric(name, value, "byte") for name, value in
               (("dram__bytes_read.sum", read), ("dram__bytes_write.sum", written))
               if value is not None}
    return KernelProfile("k", "k", 0, metrics)


def test_a_gather_of_some_rows_stands_on_the_bytes_it_moves() -> None:
    """A 206 MB table of which 67 MB of rows are read, 67 MB written: the spec says 273 MB;
    the copy of those bytes at 94.6% of the roofline is a kernel at 46% of its own."""
    got = moved_fraction(0.946, MEMORY, _kernel(67e6, 67e6), 273e6)
    assert got == pytest.approx(0.946 * 134 / 273)


@pytest.mark.parametrize("bound, kernel, spec_bytes", [
    (MEMORY, _kernel(300e6, 67e6), 273e6),  # more bytes than needed: the kernel's to save
    ("compute (FP32 FMA)", _kernel(67e6, 67e6), 273e6),  # bound by arithmetic
    (MEMORY, _kernel(None, 67e6), 273e6),  # not measured
    (MEMORY, _kernel(0.0, 0.0), 273e6),  # nothing measured (a replay that read no DRAM)
    (MEMORY, _kernel(67e6, 67e6), None),  # the spec declares its bytes: trusted as they are
])
def test_the_fraction_stays_where_the_measured_bytes_say_nothing_less(
        bound: str, kernel: KernelProfile, spec_bytes: float | None) -> None:
    assert moved_fraction(0.7, bound, kernel, spec_bytes) == 0.7
