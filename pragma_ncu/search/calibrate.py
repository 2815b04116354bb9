"""Calibrating a pool's GPUs before its first search (`pool.calibration` says why, and how
they are judged): every live worker measures the search's incumbent at its first shape, all at
once, `ROUNDS` times, keeping its fastest median; the markedly slower devices are dropped from
the pool, so that neither the search nor the re-test times anything on them.

It runs once per pool: `tune`'s later rounds search with the devices the first one kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from pragma_ncu.build.compile import BuildResult
from pragma_ncu.infra.errors import NoGPUError
from pragma_ncu.infra.progress import Notice
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.pool.calibration import Calibration, DeviceFigure, judge
from pragma_ncu.pool.workers import Lane
from pragma_ncu.search.evaluator import CALIBRATE
from pragma_ncu.search.parallel import DEATHS, PooledEvaluator
from pragma_ncu.search.serial import Problem, incumbent_point
from pragma_ncu.search.space import Point, point_key
from pragma_ncu.spec.model import Shape

ROUNDS = 2  # the faster of two: a worker's first launches may find its GPU's clocks still low


def calibrate(problem: Problem, pooled: PooledEvaluator,
              notice: Notice = lambda _: None) -> Calibration | None:
    """The pool's calibration, measured now if it has none yet and has two live workers or
    more; None when there is nothing to compare (or the incumbent does not build)."""
    pool = pooled.pool
    if pool.calibration is not None or len(pool.live) < 2:
        return pool.calibration
    if not all(lane.device is not None and lane.device.uuid for lane in pool.live):
        return None  # CPU workers share one host: a slower one is contention, not its device
    point, shape = incumbent_point(problem), problem.shapes[0]
    what = f"{point_key(point) or 'the defaults'} at {shape.name}"
    built = pooled.build(point)
    if not built.ok:
        notice(f"no calibration: {what} does not build ({built.status})")
        return None
    lanes = list(pool.live)
    notice(f"calibrating {len(lanes)} workers on {what}")
    with ThreadPoolExecutor(len(lanes)) as threads:
        rounds = [list(threads.map(lambda lane: _measure(pooled, lane, point, built, shape),
                                   lanes)) for _ in range(ROUNDS)]
    figures = [_figure(pooled, lane, [r[i] for r in rounds]) for i, lane in enumerate(lanes)]
    calibration = judge(what, figures)
    pool.calibration = calibration
    notice(calibration.summary())
    for lane in lanes:
        if lane.label in calibration.excluded:
            pool.drop(lane, calibration.why(lane.label))
    return calibration


def _measure(pooled: PooledEvaluator, lane: Lane, point: Point, built: BuildResult,
             shape: Shape) -> Measurement | str:
    """In the lane's thread: the incumbent timed as the search times it, or why not."""
    try:
        return pooled.for_lane(lane).measure(point, built, shape, CALIBRATE)
    except NoGPUError as exc:
        return f"no worker would start: {exc.reason}"


def _figure(pooled: PooledEvaluator, lane: Lane,
            results: Sequence[Measurement | str]) -> DeviceFigure:
    """The lane's fastest verified median over the rounds, with that measurement's noise."""
    timed = [m for m in results if isinstance(m, Measurement) and m.status is Status.OK
             and m.timing is not None and m.timing.median_us > 0]
    for m in results:
        if isinstance(m, Measurement) and m.status.value in DEATHS:
            pooled.pool.note_death(lane, m.message)
    if not timed:
        last = results[-1]
        why = last if isinstance(last, str) else f"{last.status.value}: {last.message[:120]}"
        return DeviceFigure(lane.label, None, problem=why)
    best = min(timed, key=lambda m: m.timing.median_us if m.timing else 0.0)
    assert best.timing is not None
    return DeviceFigure(lane.label, best.timing.median_us,
                        best.timing.iqr_us / best.timing.median_us)
