"""The one verify → time → re-verify procedure of an `evaluate` request, for every device side.

A device side (the GPU's, the CPU's) loads the candidate and lays out its arguments, then hands
the driver an `Instance`; the driver decides what happens in which order, so that the rules of
docs/harness.md hold the same on every device:

1. verify on the first seed's fresh inputs (outputs poisoned, inputs checked unchanged);
2. time on the first seed's inputs (when the request asks for timing);
3. re-verify on each further seed's inputs; with a single seed, time after the one check.

Any failed check ends the request with that check's status and no timing: a number about a
wrong kernel is never believed. Reference outputs are computed (or taken from the side's cache)
before the candidate runs, while inouts still hold their inputs.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Protocol

from pragma_ncu.measure.measurement import (
    CheckRound,
    Measurement,
    OutputCheck,
    Status,
    classify_check,
)
from pragma_ncu.measure.stats import TimingStats
from pragma_ncu.worker.protocol import EvalRequest, TimingConfig
from pragma_ncu.worker.reference import ReferenceFailure

Tolerances = dict[str, tuple[float, float]]  # output name -> (atol, rtol)
Counts = tuple[tuple[str, int], ...]  # (array name, bytes)


class Instance(Protocol):
    """One loaded candidate with its arguments' memory at one shape, on one device."""

    def prepare(self, seed: int) -> None:
        """Fresh inputs drawn from `seed`, outputs poisoned, guards and input copies reset."""
        ...

    def reference(self, seed: int) -> Any:
        """The expected outputs for the inputs just prepared from `seed`; ReferenceFailure
        when they cannot be computed."""
        ...

    def run(self) -> None:
        """Launch (or call) the candidate once and wait until it finished."""
        ...

    def check(self, refs: Any, tolerances: Tolerances
              ) -> tuple[tuple[OutputCheck, ...], Counts, Counts]:
        """Outputs against `refs`, guard bytes changed, inputs mutated."""
        ...

    def time(self, cfg: TimingConfig) -> tuple[TimingStats, float | None]:
        """Timing of the candidate on the prepared inputs, and of a same-size copy when the
        config asks for one (None where it is not comparable)."""
        ...


def measure(instance: Instance, req: EvalRequest, base: Measurement,
            start: float) -> Measurement:
    """Verify, time and re-verify `instance` as `req` asks; `base` carries what the side
    learned while loading (occupancy, ...), `start` when the request began."""
    rounds: list[CheckRound] = []
    ref_seconds = 0.0
    result = base
    for index, seed in enumerate(req.check.seeds):
        phase = "verify" if index == 0 else "reverify"
        if index == 1 and req.timing is not None:
            result = _timed(instance, req, result)
        check, spent = _check_round(instance, req, phase, seed)
        ref_seconds += spent
        rounds.append(check)
        if check.status is not Status.OK:
            return replace(result, status=check.status, message=f"{phase}: {check.message}",
                           checks=tuple(rounds), timing=None, reference_seconds=ref_seconds,
                           seconds=time.perf_counter() - start)
    if len(req.check.seeds) < 2 and req.timing is not None:
        result = _timed(instance, req, result)
    return replace(result, checks=tuple(rounds), reference_seconds=ref_seconds,
                   seconds=time.perf_counter() - start)


def _timed(instance: Instance, req: EvalRequest, result: Measurement) -> Measurement:
    assert req.timing is not None
    instance.prepare(req.check.seeds[0] if req.check.seeds else 1)  # never time on poison
    stats, copy_us = instance.time(req.timing)
    return replace(result, timing=stats, copy_us=copy_us)


def _check_round(instance: Instance, req: EvalRequest, phase: str,
                 seed: int) -> tuple[CheckRound, float]:
    instance.prepare(seed)
    t0 = time.perf_counter()
    try:
        refs = instance.reference(seed)  # before the run: inouts still hold their inputs
    except ReferenceFailure as exc:
        return CheckRound(phase, seed, Status.REFERENCE_ERROR, message=str(exc)), 0.0
    spent = time.perf_counter() - t0
    instance.run()
    tolerances = {name: (atol, rtol) for name, atol, rtol in req.check.tolerances}
    outputs, guards, mutated = instance.check(refs, tolerances)
    status, message = classify_check(outputs, guards, mutated, req.check.max_bad_fraction)
    return CheckRound(phase, seed, status, outputs, guards, mutated, message), spent
