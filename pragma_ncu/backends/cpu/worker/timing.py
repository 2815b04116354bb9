"""Timing a C function call on the CPU with the monotonic clock, and the copy-bandwidth ceiling.

One call per sample, bracketed by `time.perf_counter_ns()`, with inouts restored and (when asked)
the caches flushed before each. A sample includes the ctypes call overhead (about a microsecond),
the same for every candidate. Unlike the GPU's cheap asynchronous flush, a CPU flush costs
milliseconds, so the repetition budget counts the per-sample restore and flush: otherwise a
microsecond kernel at max_reps would spend seconds flushing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from pragma_ncu.measure import stats
from pragma_ncu.measure.stats import TimingStats
from pragma_ncu.worker.protocol import TimingConfig

FLUSH_CAP_BYTES = 256 << 20
PILOT_REPS = 3
COPY_REPS = 10
CEILING_REPS = 10
PAGE = 4096

Call = Callable[[], Any]


class Flusher:
    """Evicts the CPU caches by reading a buffer of twice the last-level cache (capped).

    The buffer is written once, here: its pages are then real (a never-written buffer maps one
    shared zero page, and reading it would evict nothing). Each flush only reads, as the GPU's
    does, so that the lines it leaves are clean and the next timed call pays no write-back.
    """

    def __init__(self, llc_bytes: int) -> None:
        words = max(PAGE, min(2 * llc_bytes, FLUSH_CAP_BYTES)) // 8
        self.buf = np.ones(words, dtype=np.uint64)
        self.sink = 0

    @property
    def nbytes(self) -> int:
        return int(self.buf.nbytes)

    def __call__(self) -> None:
        self.sink = int(self.buf.max())  # a reduction reads every line


def time_call(call: Call, restore: Call, flush: Call | None, cfg: TimingConfig,
              clock_ns: Callable[[], int] = time.perf_counter_ns) -> TimingStats:
    """Warm up, take a pilot, then as many samples as the budget allows (mode "clock"). A
    long call warms itself up (two calls, the second outlasting the warm-up, end it), is its
    own pilot, and takes fewer samples (`TimingConfig.long_ms`)."""
    def clock() -> float:
        return clock_ns() / 1e9

    deadline = clock() + cfg.warmup_ms / 1e3
    warm, long_call = 0, False
    while (warm < 3 and not long_call) or clock() < deadline:
        restore()
        start = clock()
        call()
        warm += 1
        long_call = warm == 2 and clock() - start >= cfg.warmup_ms / 1e3
    pilot, overhead_us = _samples(call, restore, flush, 1, clock_ns)
    if pilot[0] < stats.LONG_PILOT_US:
        pilot, overhead_us = _samples(call, restore, flush, PILOT_REPS, clock_ns)
    reps = stats.repetitions(float(np.median(pilot)), overhead_us, cfg.budget_ms, cfg.min_reps,
                             cfg.max_reps, cfg.long_ms, cfg.floor_reps)
    samples, _ = _samples(call, restore, flush, reps, clock_ns)
    return stats.summarize(samples, mode="clock", keep_samples=cfg.keep_samples)


def _samples(call: Call, restore: Call, flush: Call | None, reps: int,
             clock_ns: Callable[[], int] = time.perf_counter_ns) -> tuple[list[float], float]:
    """`reps` single-call samples in microseconds, and the mean restore+flush time per sample."""
    samples: list[float] = []
    overhead_ns = 0
    for _ in range(reps):
        t0 = clock_ns()
        restore()
        if flush is not None:
            flush()
        t1 = clock_ns()
        call()
        t2 = clock_ns()
        samples.append((t2 - t1) / 1e3)
        overhead_ns += t1 - t0
    return samples, overhead_ns / 1e3 / max(reps, 1)


def time_copy(flush: Call, nbytes: int, memory_bytes: int, reps: int = COPY_REPS) -> float | None:
    """Median microseconds of `np.copyto` moving `nbytes` in all (half read, half written), the
    caches flushed before each; None when too small to mean anything or too large to hold."""
    half = nbytes // 2
    if half < 1024 or 2 * half > memory_bytes // 3:
        return None
    src = np.full(half, 0x3C, dtype=np.uint8)
    dst = np.ones(half, dtype=np.uint8)  # written: no page faults inside the timed copy
    samples = []
    for _ in range(reps):
        flush()
        t0 = time.perf_counter_ns()
        np.copyto(dst, src)
        samples.append((time.perf_counter_ns() - t0) / 1e3)
    return float(np.median(samples))


def measure_ceiling(nbytes: int, memory_bytes: int, threads: int) -> dict[str, Any]:
    """GB/s counting bytes read plus bytes written, per way of copying, and the best of them
    (the keys `pragma_ncu.backends.cuda.worker.ceiling.measure` answers with on the GPU)."""
    nbytes = max(PAGE, int(min(nbytes, memory_bytes // 8)) // PAGE * PAGE)
    src = np.full(nbytes, 0x3C, dtype=np.uint8)
    dst = np.ones(nbytes, dtype=np.uint8)
    methods = {"numpy copyto": _median_us(lambda: np.copyto(dst, src))}
    step = -(-nbytes // max(threads, 1) // PAGE) * PAGE
    parts = [(lo, min(lo + step, nbytes)) for lo in range(0, nbytes, step)]
    if len(parts) > 1:  # NumPy copies without the GIL, so threads add up their bandwidth
        with ThreadPoolExecutor(len(parts)) as pool:
            def copy_parts() -> None:
                list(pool.map(lambda p: np.copyto(dst[p[0]:p[1]], src[p[0]:p[1]]), parts))

            methods[f"numpy copyto, {len(parts)} threads"] = _median_us(copy_parts)
    gbps = {k: 2 * nbytes / (us * 1e3) for k, us in methods.items()}
    best = max(gbps, key=lambda k: gbps[k])
    return {"gbps": gbps[best], "method": best, "methods": gbps, "bytes": nbytes}


def _median_us(work: Call) -> float:
    work()
    samples = []
    for _ in range(CEILING_REPS):
        t0 = time.perf_counter_ns()
        work()
        samples.append((time.perf_counter_ns() - t0) / 1e3)
    return max(float(np.median(samples)), 1e-3)
