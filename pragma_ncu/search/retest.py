"""Re-testing the top candidates and declaring a winner.

The search times each point briefly; its ranking is noisy at the top. The top-K points (plus
the best at each shape, plus the incumbent) are measured again with many more repetitions, on
fresh inputs that are verified again, in interleaved rounds so that a slow drift of the GPU hits
every candidate alike. A winner replaces the incumbent only when its re-test timings show it
faster (`search.compare`); while they cannot tell, the winner and the incumbent are measured in
more rounds (`settle`), and a verdict still undecided at the end says so.

The same rounds serve `tune`'s side-by-side comparison of a candidate with the historical best
(`loop.side_by_side`), each entrant with its own evaluator.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from pragma_ncu.build.compile import BuildResult
from pragma_ncu.infra.progress import Meter, Notice
from pragma_ncu.measure.measurement import Measurement
from pragma_ncu.search.compare import compare
from pragma_ncu.search.evaluator import RETEST, Evaluator
from pragma_ncu.search.results import FASTER, Evaluation, Retest, ShapeTime, Verdict
from pragma_ncu.search.space import Point, point_key
from pragma_ncu.spec.model import Shape


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


@dataclass(frozen=True)
class Entrant:
    """One kernel instance in a re-test: how to measure it, where, and whether it is the
    incumbent (the historical best, the default point) the others are compared with."""

    evaluator: Evaluator
    point: Point
    built: BuildResult | None  # None: not built (not verified during the search)
    is_best: bool = False


class Rounds:
    """Interleaved re-test rounds of several entrants, accumulated round by round.

    A round measures every entrant at every shape once; every other round runs the entrants
    in reverse order, so that none always runs right after another (warm caches, a clock
    still rising). An entrant that fails verification is out, with that failure.
    """

    def __init__(self, entrants: Sequence[Entrant], shapes: Sequence[Shape]) -> None:
        self.entrants, self.shapes = list(entrants), list(shapes)
        self.samples: list[dict[str, list[Measurement]]] = [{} for _ in self.entrants]
        self.failures: list[Measurement | str | None] = [_unbuilt(e) for e in self.entrants]
        self.count = 0
        self.on_round: Callable[[int], None] | None = None  # told each round's number

    def run(self, rounds: int, only: Collection[int] | None = None) -> None:
        """`rounds` more rounds, of every entrant or of those at the indices `only`."""
        for _ in range(rounds):
            order = list(range(len(self.entrants)))
            for i in order if self.count % 2 == 0 else reversed(order):
                if self.failures[i] is None and (only is None or i in only):
                    self._measure(i)
            self.count += 1
            if self.on_round is not None:
                self.on_round(self.count)

    def _measure(self, index: int) -> None:
        entrant = self.entrants[index]
        assert entrant.built is not None
        for shape in self.shapes:
            m = entrant.evaluator.measure(entrant.point, entrant.built, shape, RETEST)
            if not m.status.is_verified:
                self.failures[index] = m
                return
            self.samples[index].setdefault(shape.name, []).append(m)

    def retests(self) -> list[Retest]:
        """Each entrant's re-test so far, in the entrants' order."""
        return [summarize(e.point, self.samples[i], self.failures[i], e.is_best)
                for i, e in enumerate(self.entrants)]


def _unbuilt(entrant: Entrant) -> str | None:
    if entrant.built is None:
        return "not verified during the search"
    return None if entrant.built.ok else f"did not build: {entrant.built.status}"


Judge = Callable[[list[Retest]], Sequence[Verdict]]
MORE_ROUNDS = 4  # an undecided re-test may grow to this many times its first rounds


def settle(rounds: Rounds, first: int, judge: Judge, most: int | None = None,
           notice: Notice = lambda _: None,
           meter: Meter | None = None) -> tuple[list[Retest], list[Verdict]]:
    """Run `first` rounds, then, while a verdict of `judge` is undecided, `first` more rounds
    of the entrants it compares, up to `most` rounds (MORE_ROUNDS times `first` by default);
    the last re-tests and verdicts (those still undecided say so). `meter` is told each
    round, and the rounds' new total when more are added."""
    most = max(first, most if most is not None else MORE_ROUNDS * first)
    if meter is not None:
        rounds.on_round = meter.advance
    rounds.run(first)
    while True:
        retests = rounds.retests()
        verdicts = list(judge(retests))
        pending = [v for v in verdicts if v.undecided]
        if not pending or rounds.count >= most:
            return retests, verdicts
        only = {i for i, r in enumerate(retests)
                if any(r is v.winner or r is v.incumbent for v in pending)}
        more = min(first, most - rounds.count)
        seen = pending[0].comparison
        assert seen is not None
        notice(f"undecided after {rounds.count} re-test rounds ({seen.speedup:.2f}×, noise "
               f"{seen.noise_pct:.0f}%): {more} more")
        if meter is not None:
            meter.advance(rounds.count, total=rounds.count + more)
        rounds.run(more, only)


def retest(points: Sequence[Point], builds: dict[str, BuildResult], shapes: Sequence[Shape],
           evaluator: Evaluator, rounds: int, incumbent: Point, judge: Judge,
           notice: Notice = lambda _: None,
           meter: Meter | None = None) -> tuple[list[Retest], list[Verdict]]:
    """Measure every point at every shape, `rounds` times, interleaved, and more rounds while
    a verdict of `judge` cannot be decided (`settle`, which tells `meter` each round)."""
    inc_key = point_key(incumbent)
    entrants = [Entrant(evaluator, p, builds.get(point_key(p)), point_key(p) == inc_key)
                for p in points]
    return settle(Rounds(entrants, shapes), rounds, judge, notice=notice, meter=meter)


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
        timings = [m.timing for m in ms if m.timing is not None]
        medians = [t.median_us for t in timings]
        median = statistics.median(medians)
        noise = max(max(t.iqr_us for t in timings), max(medians) - min(medians))
        pooled = (tuple(v for t in timings for v in t.samples_us)
                  if all(t.samples_us for t in timings) else ())
        last = ms[-1]
        shapes.append(ShapeTime(name, median, noise, tuple(medians), last.gbps, last.copy_us,
                                last.flops, pooled))
    return Retest(point, "ok", shapes=tuple(shapes), is_incumbent=is_incumbent)


def decide_all(retests: Sequence[Retest], shapes: Sequence[str]) -> list[Verdict]:
    """The verdict over all shapes, then one at each of `shapes`."""
    return [decide(retests), *(decide(retests, name) for name in shapes)]


def decide(retests: Sequence[Retest], shape: str | None = None) -> Verdict:
    """The fastest verified candidate (overall, or at `shape`) against the incumbent, by the
    rule of `search.compare`."""
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
    if winner is incumbent:
        return Verdict(winner, incumbent, False, 1.0, "the incumbent is still the fastest")
    found = compare(incumbent, winner, shape)
    w, i = value(winner), value(incumbent)
    assert w is not None and i is not None
    return Verdict(winner, incumbent, found.outcome == FASTER, i / w, found.text, found)
