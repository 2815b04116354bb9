"""Timing a launch on the GPU with CUDA events.

Kernels of `graph_below_us` and longer: one launch per sample, bracketed by events, with L2
flushed (by reading a buffer three times its size) and inouts restored before each; a spin
kernel holds the stream while the host queues a batch, so no sample includes host launch latency.
Shorter kernels: a CUDA graph of many launches rotating over copies of the arrays (enough to
overflow L2 where memory allows), timed per replay and divided by the launches in it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from pragma_ncu.backends.cuda.worker.gpu import DeviceMemory, Gpu
from pragma_ncu.backends.cuda.worker.workspace import Workspace
from pragma_ncu.measure import stats
from pragma_ncu.measure.stats import TimingStats
from pragma_ncu.worker.protocol import TimingConfig

BATCH = 64
GRAPH_TARGET_US = 1000.0
ROTATION_LIMIT_BYTES = 2 << 30

Launch = Callable[..., None]  # launch(overrides=None, target=None)


class Flusher:
    """Evicts L2 by reading a buffer of three times its size."""

    def __init__(self, gpu: Gpu, harness: str) -> None:
        self.gpu = gpu
        self.nbytes = 3 * gpu.l2_bytes
        self.buf = gpu.alloc(self.nbytes)
        self.sink = gpu.alloc(8)
        self.kernel = gpu.kernel(harness, "flush_read")
        self.spin = gpu.kernel(harness, "spin_ns")

    def __call__(self) -> None:
        n16 = self.nbytes // 16
        self.gpu.launch(self.kernel, self.gpu.grid_for(n16), (256, 1, 1), 0, self.buf.ptr,
                        np.uint64(n16), self.sink.ptr)

    def hold(self, microseconds: float) -> None:
        self.gpu.launch(self.spin, (1, 1, 1), (1, 1, 1), 0, np.uint64(int(microseconds * 1e3)))


def time_launch(gpu: Gpu, ws: Workspace, launch: Launch, flusher: Flusher,
                cfg: TimingConfig, clock: Callable[[], float] = time.perf_counter
                ) -> TimingStats:
    """Warm up, take a pilot, then time in the mode the pilot calls for. A long launch warms
    itself up (two launches, the second outlasting the warm-up, end it: 16 queued launches of a
    276 ms SGEMM took 4.4 s), is its own pilot, and takes fewer repetitions
    (`TimingConfig.long_ms`)."""
    deadline = clock() + cfg.warmup_ms / 1e3
    warm, long_launch = 0, False
    while (warm < 3 and not long_launch) or clock() < deadline:
        ws.restore_inouts()
        start = clock()
        launch()
        warm += 1
        if warm <= 2 or warm % 16 == 0:
            gpu.sync()  # the second launch alone (the first may load the module) says
            long_launch = warm == 2 and clock() - start >= cfg.warmup_ms / 1e3  # how long
    gpu.sync()
    pilot, host_us = _event_samples(gpu, ws, launch, flusher, cfg, reps=1, host_us=200.0)
    if pilot[0] < stats.LONG_PILOT_US:
        pilot, host_us = _event_samples(gpu, ws, launch, flusher, cfg, reps=5, host_us=host_us)
    pilot_us = float(np.median(pilot))
    if pilot_us < cfg.graph_below_us:
        return _graph_timing(gpu, ws, launch, pilot_us, cfg)
    reps = stats.repetitions(pilot_us, 0.0, cfg.budget_ms, cfg.min_reps, cfg.max_reps,
                             cfg.long_ms, cfg.floor_reps)
    samples, _ = _event_samples(gpu, ws, launch, flusher, cfg, reps, host_us)
    return stats.summarize(samples, mode="events", keep_samples=cfg.keep_samples)


def _event_samples(gpu: Gpu, ws: Workspace, launch: Launch, flusher: Flusher, cfg: TimingConfig,
                   reps: int, host_us: float) -> tuple[list[float], float]:
    """`reps` single-launch samples in microseconds, and the host time it took to queue one."""
    starts = [gpu.record() for _ in range(min(reps, BATCH))]
    ends = [gpu.record() for _ in range(min(reps, BATCH))]
    samples: list[float] = []
    per_rep_host = host_us
    while len(samples) < reps:
        batch = min(BATCH, reps - len(samples))
        flusher.hold(per_rep_host * batch * 1.5 + 20.0)
        t0 = time.perf_counter()
        for i in range(batch):
            ws.restore_inouts()
            if cfg.flush_l2:
                flusher()
            gpu.record(starts[i])
            launch()
            gpu.record(ends[i])
        per_rep_host = max(5.0, (time.perf_counter() - t0) * 1e6 / batch)
        ends[batch - 1].sync()
        samples += [float(ends[i] - starts[i]) * 1e3 for i in range(batch)]
    return samples, per_rep_host


def _graph_timing(gpu: Gpu, ws: Workspace, launch: Launch, pilot_us: float,
                  cfg: TimingConfig) -> TimingStats:
    arrays = list(ws.arrays.values())
    set_bytes = sum(a.nbytes for a in arrays) or 1
    budget = min(ROTATION_LIMIT_BYTES, gpu.memory_free() // 4)
    copies = max(1, min(256, math.ceil(3 * gpu.l2_bytes / set_bytes), budget // set_bytes))
    extra: list[DeviceMemory] = []
    sets: list[dict[str, int]] = [{}]
    try:
        for _ in range(copies - 1):
            rotated = {}
            for a in arrays:
                mem = gpu.alloc(a.nbytes)
                gpu.copy(mem.ptr, a.ptr, a.nbytes)
                extra.append(mem)
                rotated[a.arg.name] = mem.ptr
            sets.append(rotated)
        per_graph = max(copies, math.ceil(GRAPH_TARGET_US / max(pilot_us, 0.5) / copies) * copies)

        def enqueue(target: Any) -> None:
            for j in range(per_graph):
                launch(overrides=sets[j % copies], target=target)

        graph = gpu.graph(enqueue)
        return _replay(gpu, graph, per_graph, pilot_us, cfg, copies)
    finally:
        gpu.sync()
        for mem in extra:
            gpu.free(mem)


def _replay(gpu: Gpu, graph: Any, per_graph: int, pilot_us: float, cfg: TimingConfig,
            copies: int) -> TimingStats:
    for _ in range(3):
        graph.launch(gpu.stream)
    gpu.sync()
    reps = stats.repetitions(pilot_us * per_graph, 0.0, cfg.budget_ms, min(cfg.min_reps, 10),
                             cfg.max_reps)
    samples = [gpu.time_ms(lambda: graph.launch(gpu.stream)) * 1e3 / per_graph
               for _ in range(reps)]
    mode = f"graph(rotating {copies} sets)" if copies > 1 else "graph(warm L2)"
    return stats.summarize(samples, mode=mode, launches_per_sample=per_graph,
                           keep_samples=cfg.keep_samples)


def time_copy(gpu: Gpu, flusher: Flusher, nbytes: int, reps: int = 10) -> float | None:
    """Median microseconds of a device copy moving `nbytes` in all (half read, half written)."""
    half = nbytes // 2
    if half < 1024 or 2 * half > gpu.memory_free() // 3:
        return None
    src, dst = gpu.alloc(half), gpu.alloc(half)
    try:
        samples = []
        for _ in range(reps):
            flusher()
            samples.append(gpu.time_ms(lambda: gpu.copy(dst.ptr, src.ptr, half)) * 1e3)
        return float(np.median(samples))
    finally:
        gpu.sync()
        gpu.free(src)
        gpu.free(dst)
