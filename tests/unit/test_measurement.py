"""Unit tests for pragma_ncu.measure.measurement: check classification and the Measurement
record."""

from __future__ import annotations

import json

import pytest

from pragma_ncu.measure.measurement import (
    CheckRound,
    Measurement,
    OutputCheck,
    Status,
    classify_check,
)
from pragma_ncu.measure.stats import summarize


def out(name: str = "y", numel: int = 1000, bad: int = 0, unwritten: int = 0, **kw) -> OutputCheck:
    fields = {"nan_out": 0, "max_abs": 0.0, "max_rel": 0.0, **kw}
    return OutputCheck(name=name, numel=numel, bad=bad, unwritten=unwritten, **fields)


# --- classify_check -----------------------------------------------------------------------------

def test_ok():
    assert classify_check((out(), out("z", numel=5)), (), (), 0.0) == (Status.OK, "")


def test_no_outputs_is_ok():
    assert classify_check((), (), (), 0.0) == (Status.OK, "")


def test_guard_violation_wins_over_everything():
    status, msg = classify_check(
        (out(bad=1000, unwritten=10),), (("y", 16), ("x", 4)), (("x", 8),), 0.0)
    assert status is Status.OUT_OF_BOUNDS_WRITE
    assert msg == "wrote outside the array bounds: y (16 bytes), x (4 bytes)"


def test_mutated_input_wins_over_unwritten_and_wrong():
    status, msg = classify_check((out(bad=1000, unwritten=10),), (), (("x", 8), ("w", 2)), 0.0)
    assert status is Status.INPUT_MUTATED
    assert msg == "modified input arrays: x (8 bytes changed), w (2 bytes changed)"


def test_unwritten_wins_over_wrong_answer():
    outputs = (out("a", bad=50), out("b", numel=64, unwritten=3, bad=3), out("c", unwritten=1))
    status, msg = classify_check(outputs, (), (), 0.0)
    assert status is Status.UNWRITTEN_OUTPUT
    assert msg == "output elements never written: b: 3 of 64, c: 1 of 1000"
    assert "a:" not in msg


def test_unwritten_is_not_forgiven_by_max_bad_fraction():
    status, _ = classify_check((out(unwritten=1),), (), (), 0.5)
    assert status is Status.UNWRITTEN_OUTPUT


def test_wrong_answer_message():
    o = out("y", numel=1000, bad=5, max_abs=0.5, max_rel=0.25, first_bad=7, sample_out=1.5,
            sample_ref=1.0)
    status, msg = classify_check((o,), (), (), 0.0)
    assert status is Status.WRONG_ANSWER
    assert msg == ("y: 5 of 1000 elements outside tolerance (allowed 0), max abs err 0.5, "
                   "max rel err 0.25; first at index 7: got 1.5, expected 1.0")


def test_a_nan_in_the_reference_is_said_not_shown_as_an_error_of_0():
    """Issue 35: a NaN the reference returned showed as "max abs err 0" (the errors are of the
    finite elements)."""
    o = out("y", bad=5, first_bad=3, sample_out=1.0, sample_ref=float("nan"))
    status, msg = classify_check((o,), (), (), 0.0)
    assert status is Status.WRONG_ANSWER and "max abs err" not in msg
    assert msg == ("y: 5 of 1000 elements outside tolerance (allowed 0), the reference returned "
                   "NaN where the kernel did not (a NaN must meet a NaN: fix the reference, or "
                   "its inputs); first at index 3: got 1.0, expected nan")
    kernel_nan = out("y", bad=2, max_abs=0.5, max_rel=0.1, first_bad=0,
                     sample_out=float("nan"), sample_ref=2.0)
    assert "the kernel returned NaN where the reference did not; max abs err 0.5" in \
        classify_check((kernel_nan,), (), (), 0.0)[1]
    infinite = out("y", bad=1, first_bad=9, sample_out=float("inf"), sample_ref=1.0)
    assert "no finite element is off: the mismatches are NaN or infinity" in \
        classify_check((infinite,), (), (), 0.0)[1]


def test_wrong_answer_without_first_bad():
    status, msg = classify_check((out("y", bad=2, max_abs=3.0, max_rel=1e-3),), (), (), 0.0)
    assert status is Status.WRONG_ANSWER
    assert msg == ("y: 2 of 1000 elements outside tolerance (allowed 0), max abs err 3, "
                   "max rel err 0.001")
    assert "first at index" not in msg


def test_wrong_answer_names_the_failing_output():
    outputs = (out("ok_out", bad=0), out("s_out", numel=200, bad=1))
    status, msg = classify_check(outputs, (), (), 0.0)
    assert status is Status.WRONG_ANSWER
    assert msg.startswith("s_out: 1 of 200 elements")


@pytest.mark.parametrize(
    ("fraction", "numel", "allowed"),
    [(0.01, 1000, 10), (0.1, 1000, 100), (0.5, 7, 3), (0.001, 100_000, 100), (0.0, 10, 0)],
)
def test_max_bad_fraction_allowance(fraction, numel, allowed):
    at = classify_check((out(numel=numel, bad=allowed),), (), (), fraction)
    assert at == (Status.OK, "")
    status, msg = classify_check((out(numel=numel, bad=allowed + 1),), (), (), fraction)
    assert status is Status.WRONG_ANSWER
    assert f"{allowed + 1} of {numel} elements" in msg
    assert f"(allowed {allowed})" in msg


def test_max_bad_fraction_applies_per_output():
    # 10 bad of 1000 is within 1%; 1 bad of 50 is not (allowance int(0.5) == 0)
    status, msg = classify_check((out("a", bad=10), out("b", numel=50, bad=1)), (), (), 0.01)
    assert status is Status.WRONG_ANSWER
    assert msg.startswith("b: 1 of 50")


@pytest.mark.parametrize(("fraction", "numel", "bad"), [(0.29, 100, 29), (0.57, 100, 57)])
def test_max_bad_fraction_exact_allowance_with_inexact_float(fraction, numel, bad):
    assert classify_check((out(numel=numel, bad=bad),), (), (), fraction)[0] is Status.OK


def test_status_is_verified():
    assert Status.OK.is_verified
    assert not Status.WRONG_ANSWER.is_verified
    assert not Status.TIMEOUT.is_verified


# --- Measurement ------------------------------------------------------------------------------

def _measurement(**kw) -> Measurement:
    checks = (
        CheckRound("verify", 1, Status.OK,
                   outputs=(out("y", numel=10, max_abs=1e-6, max_rel=2e-6),)),
        CheckRound("reverify", 2, Status.WRONG_ANSWER,
                   outputs=(out("y", numel=10, bad=2, max_abs=0.5, max_rel=0.1, first_bad=3,
                                sample_out=2.0, sample_ref=1.5),),
                   guard_violations=(("y", 4),), mutated_inputs=(("x", 8), ("w", 2)),
                   message="y: 2 of 10 elements outside tolerance"),
    )
    fields = dict(
        status=Status.WRONG_ANSWER, shape="odd", message="reverify failed", checks=checks,
        timing=summarize([10.0, 12.0, 11.0, 13.0, 9.0], mode="graph", launches_per_sample=8),
        bytes_moved=1_000_000, flops=2.5e6, active_blocks_per_sm=4, occupancy=0.75,
        copy_us=8.0, seconds=1.25, reference_seconds=0.5, extra={"note": "x", "n": [1, 2]},
    )
    fields.update(kw)
    return Measurement(**fields)


def test_round_trip_with_timing_and_checks():
    m = _measurement()
    data = json.loads(json.dumps(m.to_json()))
    assert data["status"] == "wrong_answer"
    assert data["gbps"] == pytest.approx(1_000_000 / 11_000.0)
    assert data["timing"]["spread_pct"] == pytest.approx(100.0 * 2.0 / 11.0)
    assert data["checks"][1]["guard_violations"] == [["y", 4]]
    back = Measurement.from_json(data)
    assert back == m
    assert back.status is Status.WRONG_ANSWER
    assert back.checks[1].status is Status.WRONG_ANSWER
    assert back.checks[1].mutated_inputs == (("x", 8), ("w", 2))
    assert back.timing is not None and back.timing.mode == "graph"
    assert back.timing.launches_per_sample == 8


def test_round_trip_keeps_the_samples_a_retest_timing_kept():
    m = _measurement(timing=summarize([10.0, 12.0, 11.0], keep_samples=True))
    back = Measurement.from_json(json.loads(json.dumps(m.to_json())))
    assert back == m and back.timing is not None and back.timing.samples_us == (10.0, 12.0, 11.0)


def test_round_trip_without_timing():
    m = Measurement(status=Status.COMPILE_ERROR, shape="big", message="nvcc: error")
    data = json.loads(json.dumps(m.to_json()))
    assert data["timing"] is None
    assert data["gbps"] is None
    back = Measurement.from_json(data)
    assert back == m
    assert back.checks == ()


def test_from_json_ignores_unknown_keys():
    data = json.loads(json.dumps(_measurement().to_json()))
    data["future_field"] = 1
    data["timing"]["future_stat"] = 2
    assert Measurement.from_json(data) == _measurement()


def test_gbps():
    m = _measurement(bytes_moved=1_000_000_000, timing=summarize([1000.0]))
    assert m.gbps == pytest.approx(1000.0)  # 1 GB in 1 ms
    m = _measurement(bytes_moved=4096, timing=summarize([2.0, 2.0, 2.0]))
    assert m.gbps == pytest.approx(2.048)
    assert _measurement(timing=None).gbps is None
    assert _measurement(bytes_moved=0).gbps is None
    assert _measurement(timing=summarize([0.0])).gbps is None


