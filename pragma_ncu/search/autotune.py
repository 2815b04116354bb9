"""One parameter search, end to end: search, re-test the top candidates, decide.

`tune_parameters` takes any `Evaluator` (a target's, recorded measurements in tests, or a
`PooledEvaluator` over many workers); `autotune` runs it over a spec's space at some shapes;
`autotune_shapes` tunes each shape on its own. The evaluator comes from the target's session
(`pragma_ncu.api.autotune` opens it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from pragma_ncu.search import retest as retesting
from pragma_ncu.search.calibrate import calibrate
from pragma_ncu.search.evaluator import Evaluator, Phases
from pragma_ncu.search.parallel import PooledEvaluator, run_parallel_search, summaries
from pragma_ncu.search.per_shape import tune_each_shape
from pragma_ncu.search.results import Budget, Evaluation, SearchResult, SearchStats
from pragma_ncu.search.serial import (
    Clock,
    Problem,
    Progress,
    SearchLog,
    choose_strategy,
    incumbent_point,
    run_search,
)
from pragma_ncu.search.space import Point, Space
from pragma_ncu.spec import Shape, TaskSpec

Notice = Callable[[str], None]


@dataclass(frozen=True)
class SearchOptions:
    strategy: str = "auto"  # one of strategies.STRATEGIES
    budget: Budget = field(default_factory=lambda: Budget(evaluations=200, seconds=None))
    top_k: int = 5
    rounds: int = 2  # interleaved re-test rounds (more, up to 4x, while a verdict is undecided)
    seed: int = 0
    jobs: int = 1  # parallel compiles
    phases: Phases | None = None  # None: the target's own (GPU and CPU time differently)


def tune_parameters(problem: Problem, evaluator: Evaluator, options: SearchOptions, *,
                    clock: Clock = time.perf_counter, progress: Progress | None = None,
                    notice: Notice = lambda _: None) -> SearchResult:
    """Search, re-test and decide; never raises for a candidate's failure. A
    `PooledEvaluator` searches on all its workers at once and re-tests on one."""
    start = clock()
    pooled = evaluator if isinstance(evaluator, PooledEvaluator) else None
    if pooled is not None:
        calibrate(problem, pooled, notice)  # a markedly slower device leaves the pool
    workers = len(pooled.pool.live) if pooled is not None else 1
    strategy = choose_strategy(options.strategy, problem, options.budget, evaluator.limits,
                               options.seed, parallel=workers > 1)
    notice(f"searching {problem.space.size} points with {strategy.name}"
           + (f" on {workers} workers" if pooled is not None else ""))
    if pooled is None:
        log = run_search(problem, evaluator, strategy, options.budget, jobs=options.jobs,
                         clock=clock, progress=progress)
    else:
        before = pooled.pool.activity()
        log = run_parallel_search(problem, pooled, strategy, options.budget,
                                  jobs=options.jobs, clock=clock, progress=progress)
    incumbent = incumbent_point(problem)
    names = [s.name for s in problem.shapes]
    points = retesting.candidates(log.evaluations, names, options.top_k, incumbent)
    on = f" on {pooled.device.label}" if pooled is not None and pooled.device else ""
    notice(f"re-testing {len(points)} candidates, {options.rounds} rounds{on}")
    t0 = clock()
    retests, verdicts = retesting.retest(points, log.builds, problem.shapes, evaluator,
                                         options.rounds, incumbent,
                                         lambda rts: retesting.decide_all(rts, names), notice)
    retest_s = clock() - t0
    general, per_shape = verdicts[0], tuple(zip(names, verdicts[1:], strict=True))
    stats = _stats(problem, log, retest_s, clock() - start)
    result = SearchResult(problem.spec.kernel_name, strategy.name, options.seed, tuple(names),
                          tuple(log.evaluations), tuple(retests), general, per_shape, stats)
    if pooled is None:
        return result
    return replace(result, workers=summaries(log, before, pooled.pool.activity()),
                   retest_device=pooled.device, calibration=pooled.pool.calibration)


def _stats(problem: Problem, log: SearchLog, retest_s: float, wall_s: float) -> SearchStats:
    evs = log.evaluations
    return SearchStats(
        space_size=problem.space.size, evaluated=log.evaluated,
        verified=sum(1 for e in evs if e.ok), pruned=dict(log.pruned), failed=dict(log.failed),
        wall_s=wall_s, search_s=log.seconds, retest_s=retest_s,
        compile_s=sum(e.compile_s for e in evs), gpu_s=sum(e.gpu_s for e in evs),
        cache_hits=sum(1 for b in log.builds.values() if b.cache_hit),
        time_to_within_2pct_s=time_to_within(evs, 0.02),
    )


def time_to_within(evaluations: Sequence[Evaluation], fraction: float) -> float | None:
    """Seconds into the search at which the running best first came within `fraction` of the
    best objective the search found."""
    values = [(e.elapsed_s, e.objective) for e in evaluations if e.objective is not None]
    if not values:
        return None
    final = min(v for _, v in values)
    running = math.inf
    for elapsed, value in sorted(values):
        running = min(running, value)
        if running <= final * (1.0 + fraction):
            return elapsed
    return None


def autotune(spec: TaskSpec, shapes: Sequence[Shape], evaluator: Evaluator,
             options: SearchOptions, *, check_shapes: Sequence[Shape] = (),
             space: Space | None = None, incumbent: Point | None = None,
             progress: Progress | None = None, notice: Notice = lambda _: None) -> SearchResult:
    """Search `spec`'s parameters with `evaluator` (a target's: one worker, or a pool's),
    timed at `shapes` and verified there and at `check_shapes`."""
    problem = Problem(spec, tuple(shapes), space or Space.from_spec(spec), incumbent or {},
                      tuple(check_shapes))
    return tune_parameters(problem, evaluator, options, progress=progress, notice=notice)


def autotune_shapes(spec: TaskSpec, shapes: Sequence[Shape], evaluator: Evaluator,
                    options: SearchOptions, *, check_shapes: Sequence[Shape] = (),
                    space: Space | None = None, incumbent: Point | None = None,
                    notice: Notice = lambda _: None) -> list[SearchResult]:
    """Tune each of `shapes` on its own (each timed alone, verified at `check_shapes` too);
    with a pool's evaluator, the shapes are spread over its workers (see `per_shape`)."""
    space = space or Space.from_spec(spec)
    problems = [Problem(spec, (shape,), space, incumbent or {}, tuple(check_shapes))
                for shape in shapes]
    return tune_each_shape(problems, evaluator, options,
                           lambda p, e, o, n: tune_parameters(p, e, o, notice=n), notice=notice)


def resolvable(spec: TaskSpec, shapes: Sequence[Shape]) -> None:
    """Every shape resolves at the spec's defaults: a bad shape fails here, before any worker
    starts or anything is compiled."""
    for shape in shapes:
        spec.resolve(shape, {})
