"""The search loop: compile ahead of the GPU on all cores, measure one point at a time.

The incumbent (the kernel's own configuration) is evaluated first. Every other point comes from
the strategy, is checked against the hardware limits before it is compiled, compiled in a thread
pool while earlier points are measured, checked again against its registers and shared memory,
then verified and timed at every shape. Only points verified at every shape get a value.
"""

from __future__ import annotations

import math
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from pragma_ncu.build.compile import BuildResult, KernelResources
from pragma_ncu.measure.measurement import Measurement
from pragma_ncu.search import feasibility, strategies
from pragma_ncu.search.evaluator import CHECK, SEARCH, Evaluator
from pragma_ncu.search.results import Budget, Evaluation
from pragma_ncu.search.space import Point, Space, point_key
from pragma_ncu.search.strategies import Strategy
from pragma_ncu.spec.model import Shape, TaskSpec

Clock = Callable[[], float]
PointDone = Callable[[Evaluation, "Evaluation | None"], None]  # a point, the best so far
ENUMERATE_LIMIT = 200_000  # larger spaces are not enumerated to count their feasible points


@dataclass(frozen=True)
class Problem:
    spec: TaskSpec
    shapes: tuple[Shape, ...]
    space: Space
    incumbent: Point = field(default_factory=dict)  # {} = the spec's defaults
    check_shapes: tuple[Shape, ...] = ()  # verified at, not timed (e.g. sizes that divide nothing)

    @property
    def all_shapes(self) -> tuple[Shape, ...]:
        return (*self.shapes, *self.check_shapes)


@dataclass
class SearchLog:
    """What the loop accumulated (mutable while it runs; frozen into a SearchResult after)."""

    evaluations: list[Evaluation] = field(default_factory=list)
    builds: dict[str, BuildResult] = field(default_factory=dict)  # verified points only
    pruned: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    evaluated: int = 0
    seconds: float = 0.0

    def best(self) -> Evaluation | None:
        ok = [e for e in self.evaluations if e.objective is not None]
        return min(ok, key=lambda e: e.objective or math.inf) if ok else None


def incumbent_point(problem: Problem) -> Point:
    """The incumbent over the space's names: the spec's defaults, overridden by the problem's."""
    defaults = problem.spec.default_params()
    return {**{n: defaults[n] for n in problem.space.names}, **problem.incumbent}


def feasible_points(problem: Problem, limits: feasibility.Limits) -> list[Point] | None:
    """The points that pass the pre-compile checks, or None when the space is too large to list."""
    if problem.space.size > ENUMERATE_LIMIT:
        return None
    return [p for p in problem.space.points()
            if feasibility.check_point(problem.spec, p, problem.all_shapes, limits) is None]


def choose_strategy(name: str, problem: Problem, budget: Budget, limits: feasibility.Limits,
                    seed: int, parallel: bool = False,
                    feasible: list[Point] | None = None) -> Strategy:
    """The registered strategy `name` (search.strategies.STRATEGIES; UnknownStrategy names
    them), or for "auto": exhaustive when every feasible point fits the evaluation budget,
    else TPE. `parallel`: points are asked for while others are still measured (many
    workers), so TPE imagines their values (a constant liar) instead of proposing their
    neighbours again. `feasible`: `feasible_points` when the caller has listed them already."""
    if name == strategies.AUTO:
        points = feasible if feasible is not None else feasible_points(problem, limits)
        small = points is not None and (budget.evaluations is None
                                         or len(points) + 1 <= budget.evaluations)
        name = "exhaustive" if small else "tpe"
    return strategies.make(name, problem.space, seed, parallel)


def planned(problem: Problem, budget: Budget, limits: feasibility.Limits,
            feasible: list[Point] | None) -> int | None:
    """How many points a search will compile and measure at most: its feasible points (the
    incumbent among them, wherever it lies) within the evaluation budget; the budget alone
    when the feasible points are not listed, None when neither bounds it (a time budget)."""
    if feasible is None:
        return budget.evaluations
    keys = {point_key(p) for p in feasible}
    incumbent = incumbent_point(problem)
    if point_key(incumbent) not in keys and feasibility.check_point(
            problem.spec, incumbent, problem.all_shapes, limits) is None:
        keys.add(point_key(incumbent))
    return len(keys) if budget.evaluations is None else min(len(keys), budget.evaluations)


def run_search(problem: Problem, evaluator: Evaluator, strategy: Strategy, budget: Budget, *,
               jobs: int = 1, clock: Clock = time.perf_counter,
               progress: PointDone | None = None) -> SearchLog:
    """Evaluate points until the strategy runs dry or the budget is spent."""
    log = SearchLog()
    start = clock()
    lookahead = max(2, jobs)
    queue: deque[tuple[Point, Future[BuildResult]]] = deque()
    seen: set[str] = set()
    first = [incumbent_point(problem)]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        while True:
            elapsed = clock() - start
            if budget.spent(log.evaluated, elapsed):
                break
            room = (budget.evaluations - log.evaluated - len(queue)
                    if budget.evaluations is not None else lookahead)
            refill(problem, evaluator, strategy, log, queue, seen, first, pool,
                   min(lookahead - len(queue), room), start, clock)
            if not queue:
                break
            point, future = queue.popleft()
            built = future.result()
            ev = record(log, evaluate_built(problem, evaluator, point, built, clock), built,
                        clock() - start)
            strategy.tell(point, ev.objective)
            if progress is not None:
                progress(ev, log.best())
        for _, future in queue:
            future.cancel()
    log.seconds = clock() - start
    return log


def refill(problem: Problem, evaluator: Evaluator, strategy: Strategy, log: SearchLog,
           queue: deque[tuple[Point, Future[BuildResult]]], seen: set[str], first: list[Point],
           pool: ThreadPoolExecutor, want: int, start: float, clock: Clock) -> None:
    """Ask for points until `want` feasible new ones are compiling (or none are left)."""
    while want > 0:
        points = [first.pop()] if first else strategy.ask(want)
        if not points:
            return
        for point in points:
            key = point_key(point)
            if key in seen:
                continue
            seen.add(key)
            infeasible = feasibility.check_point(problem.spec, point, problem.all_shapes,
                                               evaluator.limits)
            if infeasible is not None:
                _record(log, Evaluation(len(log.evaluations), point, "infeasible",
                                        infeasible.message, infeasible.code,
                                        elapsed_s=clock() - start))
                strategy.tell(point, None)
                continue
            queue.append((point, pool.submit(evaluator.build, point)))
            want -= 1


def _infeasible_build(problem: Problem, point: Point, res: KernelResources | None,
                      limits: feasibility.Limits) -> tuple[feasibility.Infeasible, str] | None:
    """A compiled kernel's resources over the GPU's limits at some shape (None for CPU
    builds, which have no such limits), with that shape's name."""
    if res is None:
        return None
    for shape in problem.all_shapes:
        launch = problem.spec.resolve(shape, point).launch
        infeasible = feasibility.check_build(res, launch, limits)
        if infeasible is not None:
            return infeasible, shape.name
    return None


def evaluate_built(problem: Problem, evaluator: Evaluator, point: Point, built: BuildResult,
                   clock: Clock) -> Evaluation:
    """One compiled point: failed to build, pruned by its resources, or measured shape by
    shape. Its index and time in the search are `record`'s to give."""
    res = built.resources
    base = Evaluation(-1, point, "ok", registers=res.registers if res else None,
                      spill_bytes=(res.spill_stores + res.spill_loads) if res else 0,
                      compile_s=built.seconds)
    if not built.ok:
        return replace(base, status=built.status, message=_tail(built.log))
    infeasible = _infeasible_build(problem, point, res, evaluator.limits)
    if infeasible is not None:
        return replace(base, status="infeasible", reason=infeasible[0].code,
                       message=f"{infeasible[0].message} at shape {infeasible[1]}")
    t0 = clock()
    measurements = _measure_all(problem.shapes, evaluator, point, built, SEARCH)
    checked: list[Measurement] = []
    if all(m.status.is_verified for m in measurements):
        checked = _measure_all(problem.check_shapes, evaluator, point, built, CHECK)
    failed = next((m for m in (*measurements, *checked) if not m.status.is_verified), None)
    return replace(base, measurements=tuple(measurements), checked=tuple(checked),
                   gpu_s=clock() - t0, status="ok" if failed is None else failed.status.value,
                   message="" if failed is None else f"{failed.shape}: {failed.message}")


def record(log: SearchLog, ev: Evaluation, built: BuildResult, elapsed_s: float) -> Evaluation:
    """Add an evaluated point to the log: its index, its time, its build if verified."""
    ev = replace(ev, index=len(log.evaluations), elapsed_s=elapsed_s)
    if ev.status != "infeasible":  # pruned points are free; the others count as evaluated
        log.evaluated += 1
    if ev.ok:
        log.builds[ev.key] = built
    return _record(log, ev)


def _measure_all(shapes: Sequence[Shape], evaluator: Evaluator, point: Point,
                 built: BuildResult, phase: str) -> list[Measurement]:
    """Measure shape by shape; stop at the first shape that fails (the point is out)."""
    out = []
    for shape in shapes:
        m = evaluator.measure(point, built, shape, phase)
        out.append(m)
        if not m.status.is_verified:
            break
    return out


def _record(log: SearchLog, ev: Evaluation) -> Evaluation:
    log.evaluations.append(ev)
    if ev.status == "infeasible":
        log.pruned[ev.reason] += 1
    elif not ev.ok:
        log.failed[ev.status] += 1
    return ev


def _tail(text: str, lines: int = 12) -> str:
    return "\n".join([ln for ln in text.splitlines() if ln.strip()][-lines:])
