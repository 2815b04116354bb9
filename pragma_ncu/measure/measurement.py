"""What measuring one candidate at one shape produced: the `Measurement` noun and its parts.

Expected failures are statuses here (compile error, wrong answer, hang, crash, ...), never
exceptions. The worker fills these from the GPU; `classify_check` turns raw counts into a status.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from pragma_ncu.measure.stats import TimingStats


class Status(StrEnum):
    OK = "ok"
    COMPILE_ERROR = "compile_error"
    KERNEL_NOT_FOUND = "kernel_not_found"
    LAUNCH_ERROR = "launch_error"  # the launch was refused (bad geometry, too many resources)
    RUNTIME_ERROR = "runtime_error"  # illegal address, misaligned access, trap, ...
    TIMEOUT = "timeout"  # the kernel (or the worker) did not finish in time: killed
    WORKER_CRASH = "worker_crash"  # the worker process died without an answer
    OUT_OF_BOUNDS_WRITE = "out_of_bounds_write"  # a guard region around an array changed
    INPUT_MUTATED = "input_mutated"  # an input-role array changed
    UNWRITTEN_OUTPUT = "unwritten_output"  # output elements still hold the poison pattern
    WRONG_ANSWER = "wrong_answer"
    REFERENCE_ERROR = "reference_error"  # the reference itself failed
    NO_GPU = "no_gpu"

    @property
    def is_verified(self) -> bool:
        return self is Status.OK


@dataclass(frozen=True)
class OutputCheck:
    name: str
    numel: int
    bad: int
    unwritten: int
    nan_out: int
    max_abs: float
    max_rel: float
    first_bad: int | None = None
    sample_out: float | None = None  # value at first_bad, for the message
    sample_ref: float | None = None


@dataclass(frozen=True)
class CheckRound:
    phase: str  # "verify" (before timing) | "reverify" (after timing, fresh inputs)
    seed: int
    status: Status
    outputs: tuple[OutputCheck, ...] = ()
    guard_violations: tuple[tuple[str, int], ...] = ()  # (array, bytes changed)
    mutated_inputs: tuple[tuple[str, int], ...] = ()  # (array, bytes changed)
    message: str = ""


@dataclass(frozen=True)
class Measurement:
    status: Status
    shape: str
    message: str = ""
    checks: tuple[CheckRound, ...] = ()
    timing: TimingStats | None = None
    bytes_moved: int = 0
    flops: float | None = None
    active_blocks_per_sm: int | None = None
    occupancy: float | None = None  # theoretical, 0..1
    copy_us: float | None = None  # a device-to-device copy of the same bytes, for scale
    seconds: float = 0.0  # wall time of this evaluation in the worker
    reference_seconds: float = 0.0  # of which spent computing the reference
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def gbps(self) -> float | None:
        if self.timing is None or self.timing.median_us <= 0 or not self.bytes_moved:
            return None
        return self.bytes_moved / (self.timing.median_us * 1e3)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["gbps"] = self.gbps
        if self.timing is not None:
            data["timing"]["spread_pct"] = self.timing.spread_pct
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> Measurement:
        timing = data.get("timing")
        checks = tuple(_check_from_json(c) for c in data.get("checks", ()))
        known = {k: v for k, v in data.items() if k in Measurement.__dataclass_fields__}
        if timing is not None:
            timing = TimingStats(**{k: v for k, v in timing.items()
                                    if k in TimingStats.__dataclass_fields__})
        return Measurement(**{**known, "status": Status(data["status"]), "checks": checks,
                              "timing": timing})


def _check_from_json(data: dict[str, Any]) -> CheckRound:
    return CheckRound(
        phase=data["phase"], seed=data["seed"], status=Status(data["status"]),
        outputs=tuple(OutputCheck(**o) for o in data.get("outputs", ())),
        guard_violations=tuple(tuple(g) for g in data.get("guard_violations", ())),
        mutated_inputs=tuple(tuple(g) for g in data.get("mutated_inputs", ())),
        message=data.get("message", ""),
    )


def classify_check(outputs: tuple[OutputCheck, ...], guard_violations: tuple[tuple[str, int], ...],
                   mutated_inputs: tuple[tuple[str, int], ...],
                   max_bad_fraction: float) -> tuple[Status, str]:
    """The status of one check round and a one-line reason; the most serious finding wins."""
    if guard_violations:
        where = ", ".join(f"{n} ({b} bytes)" for n, b in guard_violations)
        return Status.OUT_OF_BOUNDS_WRITE, f"wrote outside the array bounds: {where}"
    if mutated_inputs:
        where = ", ".join(f"{n} ({b} bytes changed)" for n, b in mutated_inputs)
        return Status.INPUT_MUTATED, f"modified input arrays: {where}"
    unwritten = [o for o in outputs if o.unwritten]
    if unwritten:
        where = ", ".join(f"{o.name}: {o.unwritten} of {o.numel}" for o in unwritten)
        return Status.UNWRITTEN_OUTPUT, f"output elements never written: {where}"
    for o in outputs:
        # The small epsilon keeps 0.29 * 100 (= 28.999...) from truncating to 28.
        allowed = math.floor(max_bad_fraction * o.numel + 1e-9)
        if o.bad > allowed:
            return Status.WRONG_ANSWER, (f"{o.name}: {o.bad} of {o.numel} elements outside "
                                         f"tolerance (allowed {allowed}), {_mismatch(o)}")
    return Status.OK, ""


def _mismatch(o: OutputCheck) -> str:
    """What is wrong with the elements outside tolerance: a NaN where the other side has a
    number said as such (NaN must meet NaN; the errors are of the finite elements, so a NaN
    alone left them at 0), then the largest finite errors where there are any, then the first
    element that differs."""
    at = "" if o.first_bad is None else (
        f"; first at index {o.first_bad}: got {o.sample_out}, expected {o.sample_ref}")
    first_out, first_ref = (_is_nan(o.sample_out), _is_nan(o.sample_ref))
    nan = ("the reference returned NaN where the kernel did not (a NaN must meet a NaN: fix "
           "the reference, or its inputs)" if first_ref and not first_out else
           "the kernel returned NaN where the reference did not" if first_out and not first_ref
           else "")
    if o.max_abs or o.max_rel or not (nan or o.first_bad is not None):
        errors = f"max abs err {o.max_abs:.3g}, max rel err {o.max_rel:.3g}"
    else:  # only NaN or infinity mismatches: no finite error to state
        errors = "" if nan else "no finite element is off: the mismatches are NaN or infinity"
    return "; ".join(part for part in (nan, errors) if part) + at


def _is_nan(value: float | None) -> bool:
    return value is not None and math.isnan(value)
