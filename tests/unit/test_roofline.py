"""The attainable roofline: bytes at the copy ceiling against FLOPs at the compute ceiling, and
what the tune loop does with it (the stop target is a fraction of that roofline)."""

from __future__ import annotations

import pytest

from pragma_ncu.conductor.rules import decide
from pragma_ncu.conductor.situation import Policy
from pragma_ncu.conductor.state import kernel_state, roofline_fraction
from pragma_ncu.measure.roofline import MEMORY, ComputeRate, attainable
from pragma_ncu.search.results import Retest, ShapeTime
from tests.situations import situation

PEAKS = {"fp32_fma": 60e12, "fp16_tensor": 600e12}


def test_a_kernel_without_flops_is_bound_by_its_bytes():
    bound = attainable(4e9, None, "fp32", 4000.0, PEAKS)
    assert bound is not None and bound.binding == MEMORY
    assert bound.time_us == pytest.approx(1000.0)
    assert bound.fraction(1250.0) == pytest.approx(0.8)


def test_the_larger_of_the_two_times_binds():
    gemm = attainable(3 * 4096**2 * 4, 2 * 4096**3, "fp32", 4000.0, PEAKS)
    assert gemm is not None and gemm.binding == "FP32 FMA"
    assert gemm.time_us == pytest.approx(2 * 4096**3 / 60e12 * 1e6)
    assert gemm.intensity == pytest.approx(2 * 4096**3 / (3 * 4096**2 * 4))
    tensor = attainable(3 * 4096**2 * 2, 2 * 4096**3, "fp16_tensor", 4000.0, PEAKS)
    assert tensor is not None and tensor.compute_rate == 600e12
    assert attainable(None, None, "fp32", None, None) is None


def test_a_same_size_copy_replaces_the_copy_ceiling():
    bound = attainable(1e9, 1e6, "fp32", 4000.0, PEAKS, memory_us=300.0)
    assert bound is not None and bound.memory_us == 300.0 and bound.binding == MEMORY


def _retest(median_us: float, flops: float | None, copy_us: float) -> Retest:
    return Retest({"BM": 128}, "ok", shapes=(ShapeTime("s", median_us, 1.0, (median_us,),
                                                       gbps=100.0, copy_us=copy_us,
                                                       flops=flops),))


def test_a_compute_bound_kernel_is_judged_on_the_compute_roofline():
    """A GEMM at 2.29 ms for 137 GFLOP with a 60 TFLOP/s FP32 ceiling is at 100% of its
    roofline although it moves bytes at 1% of the copy ceiling."""
    retest = _retest(2290.0, 2 * 4096**3, copy_us=50.0)
    frac, bound = roofline_fraction(retest, ComputeRate("fp32", PEAKS))
    assert bound == "FP32 FMA" and frac == pytest.approx(1.0, abs=0.01)
    frac_mem, bound_mem = roofline_fraction(retest)  # no compute ceiling: the copy's only
    assert bound_mem == MEMORY and frac_mem == pytest.approx(50.0 / 2290.0)


@pytest.mark.parametrize(("median_us", "stops"), [(2700.0, True), (3200.0, False)])
def test_tune_target_is_a_fraction_of_the_compute_roofline(median_us, stops):
    """--target 0.8: the best at 85% of the compute roofline stops the run; at 72% it does not
    (both are at about 2% of the copy ceiling)."""
    state = kernel_state(1, "v", "k", "h", _retest(median_us, 2 * 4096**3, copy_us=50.0),
                         verified=True, compute=ComputeRate("fp32", PEAKS))
    d = decide(situation(best=state, round_=2), Policy(target_fraction=0.8, max_rounds=9))
    on_target = d.action == "stop" and "of the attainable roofline" in d.reason
    assert on_target is stops, d.reason
    if stops:
        assert "FP32 FMA" in d.reason
    assert state.intensity == pytest.approx(2 * 4096**3 / (100.0 * median_us * 1e3))
