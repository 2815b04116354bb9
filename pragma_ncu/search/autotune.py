"""One parameter search, end to end: search, re-test the top candidates, decide.

`tune_parameters` takes any `Evaluator` (a target's, recorded measurements in tests, or a
`PooledEvaluator` over many workers); `autotune` runs it over a spec's space at some shapes;
`autotune_shapes` tunes each shape on its own. The evaluator comes from the target's session
(`pragma_ncu.api.autotune` opens it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace

from pragma_ncu.infra.progress import Meter, Notice, Progress, WorkerCount, quiet
from pragma_ncu.search import retest as retesting
from pragma_ncu.search.calibrate import calibrate
from pragma_ncu.search.evaluator import Evaluator
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.parallel import PooledEvaluator, run_parallel_search, summaries
from pragma_ncu.search.per_shape import tune_each_shape
from pragma_ncu.search.results import Evaluation, SearchResult, SearchStats
from pragma_ncu.search.serial import (
    Clock,
    PointDone,
    Problem,
    SearchLog,
    choose_strategy,
    feasible_points,
    incumbent_point,
    planned,
    run_search,
)
from pragma_ncu.search.space import Point, Space, point_key
from pragma_ncu.spec.model import Shape, TaskSpec


def tune_parameters(problem: Problem, evaluator: Evaluator, options: SearchOptions, *,
                    clock: Clock = time.perf_counter, progress: Progress | None = None,
                    notice: Notice = quiet) -> SearchResult:
    """Search, re-test and decide; never raises for a candidate's failure. A
    `PooledEvaluator` searches on all its workers at once and re-tests on one. The search and
    the re-test report to `progress` as phases (points and rounds done, the best so far, each
    worker's count); `notice` hears the lines said along the way (and, without `progress`,
    each phase's first and last line)."""
    start = clock()
    pooled = evaluator if isinstance(evaluator, PooledEvaluator) else None
    if pooled is not None:
        calibrate(problem, pooled, notice)  # a markedly slower device leaves the pool
    before = pooled.pool.activity() if pooled is not None else ()
    log, strategy = _search(problem, evaluator, pooled, options, clock, progress, notice)
    incumbent = incumbent_point(problem)
    names = [s.name for s in problem.shapes]
    points = retesting.candidates(log.evaluations, names, options.top_k, incumbent)
    on = f" on {pooled.device.label}" if pooled is not None and pooled.device else ""
    meter = Meter(progress, notice, "re-test", f"re-testing {len(points)} candidates, "
                  f"{options.rounds} rounds{on}", options.rounds, "rounds")
    t0 = clock()
    retests, verdicts = retesting.retest(points, log.builds, problem.shapes, evaluator,
                                         options.rounds, incumbent,
                                         lambda rts: retesting.decide_all(rts, names), notice,
                                         meter)
    retest_s = clock() - t0
    meter.end(f"re-tested {len(points)} candidates in {retest_s:.1f} s")
    general, per_shape = verdicts[0], tuple(zip(names, verdicts[1:], strict=True))
    stats = _stats(problem, log, retest_s, clock() - start)
    result = SearchResult(problem.spec.kernel_name, strategy, options.seed, tuple(names),
                          tuple(log.evaluations), tuple(retests), general, per_shape, stats)
    if pooled is None:
        return result
    return replace(result, workers=summaries(log, before, pooled.pool.activity()),
                   retest_device=pooled.device, calibration=pooled.pool.calibration)


def _search(problem: Problem, evaluator: Evaluator, pooled: PooledEvaluator | None,
            options: SearchOptions, clock: Clock, progress: Progress | None,
            notice: Notice) -> tuple[SearchLog, str]:
    """The search on one worker or all of a pool's, reported as a phase counted in points;
    the log and the strategy's name."""
    workers = len(pooled.pool.live) if pooled is not None else 1
    limits = evaluator.limits
    feasible = (feasible_points(problem, limits)
                if options.strategy in ("auto", "exhaustive") else None)
    strategy = choose_strategy(options.strategy, problem, options.budget, limits,
                               options.seed, parallel=workers > 1, feasible=feasible)
    meter = Meter(progress, notice, "search",
                  f"searching {problem.space.size} points with {strategy.name}"
                  + (f" on {workers} workers" if pooled is not None else ""),
                  planned(problem, options.budget, limits, feasible), "points")
    each = _point_done(meter, pooled)
    if pooled is None:
        log = run_search(problem, evaluator, strategy, options.budget, jobs=options.jobs,
                         clock=clock, progress=each)
    else:
        log = run_parallel_search(problem, pooled, strategy, options.budget,
                                  jobs=options.jobs, clock=clock, progress=each)
    meter.end(_searched(log))
    return log, strategy.name


def _point_done(meter: Meter, pooled: PooledEvaluator | None) -> PointDone:
    """What the search calls with each point it finishes: the meter's next step, with the
    best so far and, on a pool, each worker's count in this search."""
    counted = {"done": 0}
    before = {a.label: a.done for a in pooled.pool.activity()} if pooled is not None else {}

    def done(ev: Evaluation, best: Evaluation | None) -> None:
        counted["done"] += 1
        workers = tuple(WorkerCount(a.label, a.done - before.get(a.label, 0), a.deaths,
                                    bool(a.dropped))
                        for a in pooled.pool.activity()) if pooled is not None else ()
        value = f"{ev.objective:.2f} µs" if ev.objective is not None else ev.status
        meter.advance(counted["done"], best_us=best.objective if best else None,
                      workers=workers, last=f"{point_key(ev.point)}: {value}")
    return done


def _searched(log: SearchLog) -> str:
    """The search's last line: what it measured, in how long, and the best it found."""
    verified = sum(1 for e in log.evaluations if e.ok)
    best = log.best()
    rate = f" ({log.evaluated / log.seconds:.1f} points/s)" if log.seconds > 0 else ""
    return (f"searched {log.evaluated} points in {log.seconds:.1f} s{rate}: {verified} "
            "verified" + (f", best {best.objective:.2f} µs" if best and best.objective else ""))


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
             progress: Progress | None = None, notice: Notice = quiet) -> SearchResult:
    """Search `spec`'s parameters with `evaluator` (a target's: one worker, or a pool's),
    timed at `shapes` and verified there and at `check_shapes`; reporting as
    `tune_parameters` does."""
    problem = Problem(spec, tuple(shapes), space or Space.from_spec(spec), incumbent or {},
                      tuple(check_shapes))
    return tune_parameters(problem, evaluator, options, progress=progress, notice=notice)


def autotune_shapes(spec: TaskSpec, shapes: Sequence[Shape], evaluator: Evaluator,
                    options: SearchOptions, *, check_shapes: Sequence[Shape] = (),
                    space: Space | None = None, incumbent: Point | None = None,
                    progress: Progress | None = None,
                    notice: Notice = quiet) -> list[SearchResult]:
    """Tune each of `shapes` on its own (each timed alone, verified at `check_shapes` too);
    with a pool's evaluator, the shapes are spread over its workers (see `per_shape`)."""
    space = space or Space.from_spec(spec)
    problems = [Problem(spec, (shape,), space, incumbent or {}, tuple(check_shapes))
                for shape in shapes]
    return tune_each_shape(problems, evaluator, options,
                           lambda p, e, o, n, r: tune_parameters(p, e, o, notice=n, progress=r),
                           notice=notice, progress=progress)


def resolvable(spec: TaskSpec, shapes: Sequence[Shape]) -> None:
    """Every shape resolves at the spec's defaults: a bad shape fails here, before any worker
    starts or anything is compiled."""
    for shape in shapes:
        spec.resolve(shape, {})
