"""Measuring inside a round: the historical best and the candidate side by side.

A candidate is compared with the historical best in the same interleaved re-test rounds, on
the same GPU minutes, with fresh inputs verified again: the comparison the acceptance rule
rests on, not two numbers taken at different times.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pragma_ncu.build import BuildResult
from pragma_ncu.measurement import Measurement
from pragma_ncu.search.evaluator import CHECK, RETEST, Evaluator
from pragma_ncu.search.results import Evaluation, Retest
from pragma_ncu.search.retest import summarize
from pragma_ncu.search.space import Point
from pragma_ncu.spec import Shape


@dataclass(frozen=True)
class Entrant:
    """One kernel instance in a side-by-side re-test."""

    evaluator: Evaluator
    point: Point
    built: BuildResult
    is_best: bool = False


def side_by_side(entrants: Sequence[Entrant], shapes: Sequence[Shape],
                 rounds: int) -> list[Retest]:
    """Each entrant at each shape, `rounds` times, interleaved; a failure ends that entrant."""
    samples: list[dict[str, list[Measurement]]] = [{} for _ in entrants]
    failures: list[Measurement | str | None] = [
        None if e.built.ok else f"did not build: {e.built.status}" for e in entrants]
    for _ in range(rounds):
        for i, e in enumerate(entrants):
            if failures[i] is not None:
                continue
            for shape in shapes:
                m = e.evaluator.measure(e.point, e.built, shape, RETEST)
                if not m.status.is_verified:
                    failures[i] = m
                    break
                samples[i].setdefault(shape.name, []).append(m)
    return [summarize(e.point, samples[i], failures[i], e.is_best)
            for i, e in enumerate(entrants)]


def check_everywhere(entrant: Entrant, shapes: Sequence[Shape]) -> str:
    """Verify (no timing) at the check shapes; '' when right everywhere, else what failed."""
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
