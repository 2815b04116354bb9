"""Re-testing the top candidates and declaring a winner.

The search times each point briefly; its ranking is noisy at the top. The top-K points (plus
the best at each shape, plus the incumbent) are measured again with many more repetitions, on
fresh inputs that are verified again, in interleaved rounds so that a slow drift of the GPU hits
every candidate alike. A winner replaces the incumbent only when it is faster by more than the
noise measured on both.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from pragma_ncu.build import BuildResult
from pragma_ncu.measurement import Measurement
from pragma_ncu.search.evaluator import RETEST, Evaluator
from pragma_ncu.search.results import Evaluation, Retest, ShapeTime, Verdict
from pragma_ncu.search.space import Point, point_key
from pragma_ncu.spec import Shape


def candidates(evaluations: Sequence[Evaluation], shapes: Sequence[str], top_k: int,
               incumbent: Point) -> list[Point]:
    """The top-K by objective, the best point at each shape, and the incumbent, each once."""
    ok = sorted((e for e in evaluations if e.objective is not None),
                key=lambda e: e.objective or math.inf)
    chosen = [e.point for e in ok[:top_k]]
    for shape in shapes:
        timed = [e for e in ok if e.median_us(shape) is not None]
        if timed:
            chosen.append(min(timed, key=lambda e: e.median_us(shape) or math.inf).point)
    chosen.append(incumbent)
    unique: dict[str, Point] = {}
    for point in chosen:
        unique.setdefault(point_key(point), point)
    return list(unique.values())


def retest(points: Sequence[Point], builds: dict[str, BuildResult], shapes: Sequence[Shape],
           evaluator: Evaluator, rounds: int, incumbent: Point) -> list[Retest]:
    """Measure every point at every shape, `rounds` times, interleaved."""
    samples: dict[str, dict[str, list[Measurement]]] = {point_key(p): {} for p in points}
    failures: dict[str, Measurement | str] = {}
    for key in samples:
        if key not in builds:
            failures[key] = "not verified during the search"
    for _ in range(rounds):
        for point in points:
            key = point_key(point)
            if key in failures:
                continue
            for shape in shapes:
                m = evaluator.measure(point, builds[key], shape, RETEST)
                if not m.status.is_verified:
                    failures[key] = m
                    break
                samples[key].setdefault(shape.name, []).append(m)
    inc_key = point_key(incumbent)
    return [summarize(p, samples[point_key(p)], failures.get(point_key(p)),
                       point_key(p) == inc_key) for p in points]


def summarize(point: Point, by_shape: dict[str, list[Measurement]],
              failure: Measurement | str | None, is_incumbent: bool) -> Retest:
    """One candidate's re-test: median over rounds and noise per shape, or its failure."""
    if isinstance(failure, str):
        return Retest(point, "not_verified", failure, is_incumbent=is_incumbent)
    if failure is not None:
        return Retest(point, failure.status.value, f"{failure.shape}: {failure.message}",
                      is_incumbent=is_incumbent)
    shapes = []
    for name, ms in by_shape.items():
        medians = [m.timing.median_us for m in ms if m.timing is not None]
        iqrs = [m.timing.iqr_us for m in ms if m.timing is not None]
        median = statistics.median(medians)
        noise = max(max(iqrs), max(medians) - min(medians))
        last = ms[-1]
        shapes.append(ShapeTime(name, median, noise, tuple(medians), last.gbps, last.copy_us,
                                last.flops))
    return Retest(point, "ok", shapes=tuple(shapes), is_incumbent=is_incumbent)


def decide(retests: Sequence[Retest], shape: str | None = None) -> Verdict:
    """The fastest verified candidate (overall, or at `shape`) against the incumbent."""
    def value(r: Retest) -> float | None:
        if shape is None:
            return r.objective
        at = r.at(shape)
        return at.median_us if at is not None else None

    ok = [r for r in retests if r.status == "ok" and value(r) is not None]
    incumbent = next((r for r in retests if r.is_incumbent), None)
    if not ok:
        return Verdict(None, incumbent, False, None, "no candidate was verified in the re-test")
    winner = min(ok, key=lambda r: value(r) or math.inf)
    if incumbent is None or incumbent.status != "ok" or value(incumbent) is None:
        why = incumbent.message if incumbent is not None else "no incumbent"
        return Verdict(winner, incumbent, True, None, f"the incumbent is not usable ({why})")
    w, i = value(winner), value(incumbent)
    assert w is not None and i is not None
    speedup = i / w
    if winner is incumbent:
        return Verdict(winner, incumbent, False, 1.0, "the incumbent is still the fastest")
    margin = _relative_noise(winner, incumbent, shape)
    if w < i * (1.0 - margin):
        return Verdict(winner, incumbent, True, speedup,
                       f"{100 * (1 - w / i):.1f}% faster, beyond the {100 * margin:.1f}% noise")
    return Verdict(winner, incumbent, False, speedup,
                   f"{100 * (1 - w / i):.1f}% faster, within the {100 * margin:.1f}% noise: "
                   "the incumbent stays")


def _relative_noise(a: Retest, b: Retest, shape: str | None) -> float:
    """The larger relative noise of the two, at `shape` or at the noisiest shape."""
    names = [shape] if shape is not None else [s.shape for s in b.shapes]
    worst = 0.0
    for name in names:
        sa, sb = a.at(name), b.at(name)
        if sa is None or sb is None:
            continue
        worst = max(worst, max(sa.noise_us, sb.noise_us) / sb.median_us)
    return worst
