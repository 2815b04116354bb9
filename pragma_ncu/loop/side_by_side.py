"""Measuring inside a round: the historical best and the candidate side by side.

A candidate is compared with the historical best in the same interleaved re-test rounds, on
the same GPU minutes, with fresh inputs verified again: the comparison the acceptance rule
rests on, not two numbers taken at different times. While the rule cannot tell, the two are
measured in more rounds, up to a bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pragma_ncu.infra.progress import Meter, Progress
from pragma_ncu.search.evaluator import CHECK
from pragma_ncu.search.results import Evaluation, Retest
from pragma_ncu.search.retest import Entrant, Judge, Notice, Rounds, settle
from pragma_ncu.search.space import Point
from pragma_ncu.spec.model import Shape

__all__ = ["Entrant", "check_everywhere", "evaluation_row", "failure_summary", "side_by_side"]


def side_by_side(entrants: Sequence[Entrant], shapes: Sequence[Shape], rounds: int,
                 judge: Judge | None = None, notice: Notice = lambda _: None,
                 progress: Progress | None = None) -> list[Retest]:
    """Each entrant at each shape, `rounds` times, interleaved (a failure ends that entrant);
    with a `judge`, more rounds while its verdict is undecided (`search.retest.settle`),
    reported to `progress` as a phase counted in rounds."""
    together = Rounds(entrants, shapes)
    if judge is None:
        together.run(rounds)
        return together.retests()
    meter = Meter(progress, notice, "side by side", "", rounds, "rounds")
    retests, _ = settle(together, rounds, judge, notice=notice, meter=meter)
    meter.end()
    return retests


def check_everywhere(entrant: Entrant, shapes: Sequence[Shape]) -> str:
    """Verify (no timing) at the check shapes; '' when right everywhere, else what failed."""
    if entrant.built is None or not entrant.built.ok:
        return "not built"
    for shape in shapes:
        m = entrant.evaluator.measure(entrant.point, entrant.built, shape, CHECK)
        if not m.status.is_verified:
            return f"{m.status.value} at {shape.name}: {m.message}"
    return ""


def failure_summary(evaluations: Sequence[Evaluation]) -> tuple[str, str]:
    """(kind, text) for a search in which nothing was verified: "build" when no point built,
    else "verification", with the first messages of each failing status."""
    failed = [e for e in evaluations if e.status not in ("ok", "infeasible")]
    if not evaluations or all(e.status == "infeasible" for e in evaluations):
        return "build", "every point was outside the GPU's limits"
    built_any = any(e.status not in ("compile_error", "kernel_not_found", "infeasible")
                    for e in evaluations)
    seen: dict[str, str] = {}
    for e in failed:
        seen.setdefault(e.status, f"{e.status} at {_point(e.point)}: {_first_lines(e.message)}")
    return ("verification" if built_any else "build"), "\n".join(seen.values())


def evaluation_row(evaluation: Evaluation) -> dict[str, Any]:
    """What the run store keeps of one evaluated point (each measurement with the worker's
    device, when there were many)."""
    failed = evaluation.status in ("compile_error", "kernel_not_found", "infeasible")
    return {"build": {"status": evaluation.status if failed else "ok",
                      "registers": evaluation.registers, "spill_bytes": evaluation.spill_bytes,
                      "compile_s": evaluation.compile_s, "reason": evaluation.reason},
            "measurements": [{**m.to_json(), **({"device": evaluation.device.to_json()}
                                                  if evaluation.device else {})}
                             for m in (*evaluation.measurements, *evaluation.checked)]}


def _point(point: Point) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(point.items())) or "defaults"


def _first_lines(text: str, n: int = 6) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(lines[:n])
