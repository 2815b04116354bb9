"""The search on many workers at once (one per GPU): no worker waits for another.

This thread schedules. It asks the strategy for as many points as there are idle workers plus a
look-ahead, checks them against the hardware limits, and compiles them in one thread pool for
all workers (one compile cache). Each worker has a thread that takes the next compiled point,
prunes it by its registers and shared memory, and verifies and times it at every shape: every
shape of a point on one device, which the point records. Rules as on one GPU: the same phases,
the same verification, a point counts only when verified everywhere.

A worker that dies on a point (crash, hang, or killed from outside) is replaced on its device
by its runner, and the point is measured again, on another worker where there is one. If it
dies there too, the candidate is at fault and the point keeps that status; if it is measured
there, the death counts against the first device. A device that fails `max_failures` times in
a row (deaths of fine points, workers that do not start) is dropped with a message and the
search goes on with the others. A finished point is never measured again nor lost.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace

from pragma_ncu.build.compile import BuildResult
from pragma_ncu.infra.errors import NoGPUError
from pragma_ncu.measure.measurement import Measurement
from pragma_ncu.pool.workers import Lane, LaneActivity, WorkerDevice, WorkerPool
from pragma_ncu.search.evaluator import Evaluator
from pragma_ncu.search.results import Budget, Evaluation, WorkerSummary
from pragma_ncu.search.serial import (
    Clock,
    PointDone,
    Problem,
    SearchLog,
    evaluate_built,
    incumbent_point,
    record,
    refill,
)
from pragma_ncu.search.space import Point, point_key
from pragma_ncu.search.strategies import Strategy
from pragma_ncu.spec.model import Shape

DEATHS = ("worker_crash", "timeout")  # statuses of a worker that gave no answer


class PooledEvaluator:
    """An `Evaluator` over a pool: one evaluator per worker, made by `make(lane)`.

    `build` is shared (one compile cache, compiled once for all workers). `measure` runs on the
    pool's primary worker, so that the re-test of the top candidates and the side-by-side
    comparison with the historical best time every candidate on one GPU (two GPUs of one model
    differ by a few percent). The parallel search measures through `for_lane`.
    """

    def __init__(self, pool: WorkerPool, make: Callable[[Lane], Evaluator]) -> None:
        self.pool = pool
        self._make = make
        self._lock = threading.Lock()
        self._evaluators: dict[str, Evaluator] = {}
        self._builder = self.for_lane(pool.primary)
        self.limits = self._builder.limits

    def for_lane(self, lane: Lane) -> Evaluator:
        with self._lock:
            if lane.label not in self._evaluators:
                self._evaluators[lane.label] = self._make(lane)
            return self._evaluators[lane.label]

    def wrapped(self, wrap: Callable[[Evaluator], Evaluator]) -> PooledEvaluator:
        """The same pool, each lane's evaluator wrapped (the measurement cache's)."""
        return PooledEvaluator(self.pool, lambda lane: wrap(self._make(lane)))

    def build(self, point: Point) -> BuildResult:
        return self._builder.build(point)

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        return self.for_lane(self.pool.primary).measure(point, built, shape, phase)

    @property
    def device(self) -> WorkerDevice | None:
        """The device that re-tests (the primary worker's)."""
        return self.pool.primary.device


@dataclass(frozen=True)
class _Job:
    point: Point
    build: Future[BuildResult]
    died_on: Lane | None = None  # the lane whose worker died on it first
    death: str = ""


@dataclass(frozen=True)
class _Outcome:
    """What a worker's thread made of a job: an evaluation, or why the lane could not run."""

    evaluation: Evaluation | None = None  # None when no worker would start on the lane
    built: BuildResult | None = None
    lane_error: str = ""


@dataclass
class _Run:
    """One parallel search's moving parts (this thread alone touches them)."""

    problem: Problem
    pooled: PooledEvaluator
    strategy: Strategy
    budget: Budget
    clock: Clock
    progress: PointDone | None
    start: float
    log: SearchLog = field(default_factory=SearchLog)
    ready: deque[tuple[Point, Future[BuildResult]]] = field(default_factory=deque)
    retry: deque[_Job] = field(default_factory=deque)
    inflight: dict[Future[_Outcome], tuple[Lane, _Job]] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    first: list[Point] = field(default_factory=list)

    @property
    def pool(self) -> WorkerPool:
        return self.pooled.pool


def run_parallel_search(problem: Problem, pooled: PooledEvaluator, strategy: Strategy,
                        budget: Budget, *, jobs: int = 1, clock: Clock = time.perf_counter,
                        progress: PointDone | None = None) -> SearchLog:
    """Evaluate points on every live worker until the strategy runs dry or the budget is
    spent; the points in flight when it is spent are finished and kept."""
    run = _Run(problem, pooled, strategy, budget, clock, progress, clock(),
               first=[incumbent_point(problem)])
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as compiles, \
            ThreadPoolExecutor(max_workers=len(run.pool.lanes)) as threads:
        try:
            _loop(run, compiles, threads, max(2, jobs))
        except BaseException:  # Ctrl-C, or a bug: stop the workers so their threads end now
            for lane in run.pool.live:
                lane.runner.close(wait_s=0.0)
            raise
        finally:
            for _, compiling in run.ready:
                compiling.cancel()
    run.log.seconds = clock() - run.start
    return run.log


def _loop(run: _Run, compiles: ThreadPoolExecutor, threads: ThreadPoolExecutor,
          lookahead: int) -> None:
    while True:
        busy = {lane for lane, _ in run.inflight.values()}
        idle = [lane for lane in run.pool.live if lane not in busy]
        spent = run.budget.spent(run.log.evaluated, run.clock() - run.start)
        if not spent:
            _refill(run, compiles, len(run.pool.live) + lookahead)
        _dispatch(run, idle, threads, spent)
        if not run.inflight:
            return
        done, _ = wait(list(run.inflight), return_when=FIRST_COMPLETED)
        for finished in done:
            _collect(run, finished)


def _refill(run: _Run, compiles: ThreadPoolExecutor, target: int) -> None:
    """Keep `target` points compiling or compiled ahead of the workers (within the budget)."""
    want = target - len(run.ready)
    if run.budget.evaluations is not None:
        want = min(want, run.budget.evaluations - run.log.evaluated - len(run.inflight)
                   - len(run.ready) - len(run.retry))
    if want > 0:
        refill(run.problem, run.pooled, run.strategy, run.log, run.ready, run.seen, run.first,
               compiles, want, run.start, run.clock)


def _dispatch(run: _Run, idle: list[Lane], threads: ThreadPoolExecutor, spent: bool) -> None:
    """Give each idle worker a point: one whose worker died elsewhere first, else the next."""
    for lane in idle:
        job = _take_retry(run, lane)
        if job is None and run.ready and not spent:
            job = _Job(*run.ready.popleft())
        if job is None:
            continue
        lane.current = point_key(job.point)
        future = threads.submit(_measure_on, run.problem, run.pooled.for_lane(lane), lane, job,
                                run.clock)
        run.inflight[future] = (lane, job)


def _take_retry(run: _Run, lane: Lane) -> _Job | None:
    """A point to measure again: on another device than the one it died on, unless this is
    the only device left."""
    others = [lane_ for lane_ in run.pool.live if lane_ is not lane]
    for job in run.retry:
        if job.died_on is not lane or not others:
            run.retry.remove(job)
            return job
    return None


def _measure_on(problem: Problem, evaluator: Evaluator, lane: Lane, job: _Job,
                clock: Clock) -> _Outcome:
    """In the lane's thread: wait for the point's compile, then measure it on the lane."""
    built = job.build.result()
    try:
        ev = evaluate_built(problem, evaluator, job.point, built, clock)
    except NoGPUError as exc:  # the worker died and no new one would start on this device
        return _Outcome(lane_error=exc.reason)
    return _Outcome(replace(ev, device=lane.device), built)


def _collect(run: _Run, future: Future[_Outcome]) -> None:
    lane, job = run.inflight.pop(future)
    run.pool.release(lane)
    out = future.result()
    if out.evaluation is None:  # not the point's fault: another worker takes it
        why = f"no worker would start: {_first_line(out.lane_error)}"
        if not run.pool.charge(lane, why):
            run.pool.notice(f"{lane.label}: {why}; trying again")
        run.retry.appendleft(job)
        return
    ev = out.evaluation
    assert out.built is not None
    if ev.status in DEATHS:
        run.pool.note_death(lane, ev.message)
        if job.died_on is None:  # measure it again, elsewhere where possible
            run.retry.append(replace(job, died_on=lane, death=ev.message))
            return
        ev = replace(ev, message=f"{ev.message}\n(the worker on {job.died_on.label} died on "
                                 f"it first: {_first_line(job.death)})")
    elif ev.measurements or ev.checked:
        run.pool.cleared(lane)
        lane.done += 1
        if job.died_on is not None:  # it was fine: the first death was the device's
            run.pool.charge(job.died_on, f"its worker died on a point that {lane.label} then "
                            f"measured: {_first_line(job.death)}")
    done = record(run.log, ev, out.built, run.clock() - run.start)
    run.strategy.tell(done.point, done.objective)
    if run.progress is not None:
        run.progress(done, run.log.best())


def summaries(log: SearchLog, before: tuple[LaneActivity, ...],
              after: tuple[LaneActivity, ...]) -> tuple[WorkerSummary, ...]:
    """Each worker's share of one search: points measured, points per second, deaths."""
    counts: dict[str, int] = {}
    for ev in log.evaluations:
        if ev.device is not None and (ev.measurements or ev.checked):
            counts[ev.device.label] = counts.get(ev.device.label, 0) + 1
    deaths0 = {a.label: a.deaths for a in before}
    seconds = log.seconds or float("inf")
    return tuple(WorkerSummary(a.label, a.name, counts.get(a.label, 0),
                               counts.get(a.label, 0) / seconds,
                               a.deaths - deaths0.get(a.label, 0), a.dropped) for a in after)


def _first_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[0][:200] if lines else "no message"
