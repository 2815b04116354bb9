"""Tuning shapes one by one (an inference server's table: one configuration per batch size).

Each shape is its own search, timed at that shape alone. With a pool of workers and at least as
many shapes as workers, the shapes are spread over the workers: each worker tunes one shape at a
time, its search and its re-test on its own device, so every candidate of a shape is timed on one
GPU. Compiles are shared: a point compiled for one shape is not compiled again for another.
With fewer shapes than workers, the shapes are tuned one after another, each on all workers.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace

from pragma_ncu.build.compile import BuildResult
from pragma_ncu.infra.errors import NoGPUError
from pragma_ncu.infra.progress import Meter, Notice, Progress, WorkerCount
from pragma_ncu.measure.measurement import Measurement
from pragma_ncu.pool.workers import Lane, PoolError, WorkerPool
from pragma_ncu.search.evaluator import Evaluator
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.parallel import PooledEvaluator
from pragma_ncu.search.results import SearchResult, WorkerSummary
from pragma_ncu.search.serial import Problem
from pragma_ncu.search.space import Point, point_key
from pragma_ncu.spec.model import Shape

# tune_parameters: a problem, its evaluator and options, where to say lines and report phases
Tune = Callable[[Problem, Evaluator, SearchOptions, Notice, Progress | None], SearchResult]


class SharedBuilds:
    """Compiles shared by searches running at once: each point is compiled once, and a search
    that asks for a point another is compiling waits for that compile."""

    def __init__(self, build: Callable[[Point], BuildResult]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._futures: dict[str, Future[BuildResult]] = {}

    def build(self, point: Point) -> BuildResult:
        key = point_key(point)
        with self._lock:
            future = self._futures.get(key)
            owner = future is None
            if future is None:
                future = self._futures[key] = Future()
        if owner:
            try:
                future.set_result(self._build(point))
            except BaseException as exc:  # the waiting searches see it too
                future.set_exception(exc)
        return future.result()


class OnLane:
    """An evaluator that measures on one lane and compiles through the shared builds."""

    def __init__(self, measurer: Evaluator, builds: SharedBuilds) -> None:
        self.measurer, self.builds = measurer, builds
        self.limits = measurer.limits

    def build(self, point: Point) -> BuildResult:
        return self.builds.build(point)

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        return self.measurer.measure(point, built, shape, phase)


def tune_each_shape(problems: Sequence[Problem], evaluator: Evaluator, options: SearchOptions,
                    tune: Tune, *, notice: Notice = lambda _: None,
                    progress: Progress | None = None) -> list[SearchResult]:
    """One search per problem (each times one shape) through `tune`; results in the problems'
    order. One after another, each search reports its phases to `progress`; spread over a
    pool's workers, the searches say nothing and the shapes are the phase counted."""
    pooled = evaluator if isinstance(evaluator, PooledEvaluator) else None
    if pooled is None or len(problems) < len(pooled.pool.live):
        out = []
        for i, problem in enumerate(problems):
            notice(f"shape {problem.shapes[0].name} ({i + 1}/{len(problems)})")
            out.append(tune(problem, evaluator, options, notice, progress))
        return out
    meter = Meter(progress, notice, "shapes", f"tuning {len(problems)} shapes on "
                  f"{len(pooled.pool.live)} workers, one shape each at a time", len(problems),
                  "shapes")
    try:
        return _spread(problems, pooled, options, tune, notice, meter)
    finally:
        meter.end()


def _spread(problems: Sequence[Problem], pooled: PooledEvaluator, options: SearchOptions,
            tune: Tune, notice: Notice, meter: Meter) -> list[SearchResult]:
    """Each live worker tunes the next shape waiting; a worker that cannot start hands its
    shape back and, after too many failures, is dropped."""
    pool = pooled.pool
    builds = SharedBuilds(pooled.build)
    share = replace(options, jobs=max(1, options.jobs // len(pool.live)))
    pending = deque(enumerate(problems))
    results: dict[int, SearchResult] = {}
    inflight: dict[Future[SearchResult], tuple[Lane, int]] = {}
    with ThreadPoolExecutor(max_workers=len(pool.lanes)) as threads:
        while True:
            busy = {lane for lane, _ in inflight.values()}
            for lane in (lane for lane in pool.live if lane not in busy):
                if not pending:
                    break
                i, problem = pending.popleft()
                lane.current = problem.shapes[0].name
                future = threads.submit(_tune_on, tune, problem,
                                        OnLane(pooled.for_lane(lane), builds), lane, share)
                inflight[future] = (lane, i)
            if not inflight:
                break
            done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            for finished in done:
                _collect(finished, inflight, pending, results, problems, notice, pool)
                meter.advance(len(results), workers=tuple(
                    WorkerCount(a.label, a.done, a.deaths, bool(a.dropped))
                    for a in pool.activity()))
    if pending:
        raise PoolError(f"no worker is left for {len(pending)} shape(s)")
    return [results[i] for i in range(len(problems))]


def _tune_on(tune: Tune, problem: Problem, evaluator: OnLane, lane: Lane,
             options: SearchOptions) -> SearchResult:
    start = time.perf_counter()
    result = tune(problem, evaluator, options, lambda _: None, None)  # threads say nothing
    evs = tuple(replace(e, device=lane.device) for e in result.evaluations)
    measured = sum(1 for e in evs if e.measurements or e.checked)
    seconds = max(time.perf_counter() - start, 1e-9)
    worker = WorkerSummary(lane.label, lane.device.name if lane.device else "", measured,
                           measured / seconds)
    return replace(result, evaluations=evs, retest_device=lane.device, workers=(worker,))


def _collect(finished: Future[SearchResult], inflight: dict[Future[SearchResult],
             tuple[Lane, int]], pending: deque[tuple[int, Problem]],
             results: dict[int, SearchResult], problems: Sequence[Problem], notice: Notice,
             pool: WorkerPool) -> None:
    lane, i = inflight.pop(finished)
    pool.release(lane)
    try:
        result = finished.result()
    except NoGPUError as exc:  # its worker died and no new one starts: another takes the shape
        pending.appendleft((i, problems[i]))
        pool.charge(lane, f"no worker would start: {exc.reason}")
        return
    results[i] = result
    lane.done += 1
    pool.cleared(lane)
    best = result.general.winner
    notice(f"{lane.label}: shape {problems[i].shapes[0].name} done ("
           + (f"best {best.objective:.2f} µs" if best and best.objective else "nothing verified")
           + f"; {len(results)}/{len(problems)} shapes)")
