"""A hold-out the diagnosis was not calibrated on: the 22 kernels of examples/apps/pipeline.cu
under ncu's default set, as a user collects them (`ncu -o app ./app`), recorded on an NVIDIA
H200 (driver 580.159.04, ncu 2025.3.1, 2026-11-24; tests/fixtures/apps/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu.backends import diagnose_in
from pragma_ncu.backends.cuda.diagnosis.signals import L2_REUSE_RATIO, Signals
from pragma_ncu.profile.profiles import KernelProfile, Profile
from pragma_ncu.profile.read import read_csv_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "apps" / "pipeline"
# One element per thread, each read and written once: nothing is re-read from L2. (The pages
# name kernels as mangled, e.g. _Z5scaleILi1EEvPfPKfi for scale<1>.)
STREAMING = ("5scaleILi1E", "5scaleILi4E", "4axpy", "10relu_block", "8silu_mul", "9gelu_tanh",
             "11clamp_range", "8stencil3", "4polyILi8E")


def _first(side: str, part: str) -> tuple[Profile, KernelProfile]:
    """The side's profile and the first launch of the kernel whose mangled name has `part`."""
    profile = read_csv_file(FIXTURES / side / "raw.csv.gz")
    return profile, next(k for k in profile.kernels if part in k.mangled)


@pytest.mark.parametrize("name", STREAMING)
def test_a_streaming_kernel_is_memory_bound_not_l2_bound(knowledge, name):
    profile, k = _first("base", name)
    s = Signals.of(k)
    assert s.val("l2") > s.val("dram")  # L2 busier than DRAM, yet no reuse:
    assert s.val("l2_reuse") < L2_REUSE_RATIO  # every sector it serves was filled from DRAM
    d = diagnose_in(profile, k, knowledge)
    assert d.classification == "memory_bandwidth"
    assert "below the roofline" in d.findings[0].title
    assert "l2_bandwidth" not in [f.bottleneck for f in d.findings]


@pytest.mark.parametrize("name, cause", [("8row_mean", "uncoalesced_access"),
                                         ("12histogram256", "atomic_contention")])
def test_the_planted_regressions_are_named_on_the_new_side(knowledge, name, cause):
    profile, k = _first("new", name)
    assert diagnose_in(profile, k, knowledge).classification == cause


def test_the_small_grid_of_the_base_side_is_named(knowledge):
    profile, k = _first("base", "10norm_scale")
    assert diagnose_in(profile, k, knowledge).classification == "small_grid"
