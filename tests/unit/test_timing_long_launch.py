"""A long launch takes fewer repetitions, in the worker's own timing code run against a fake
GPU on a simulated clock: a 276 ms SGEMM used to be launched 71 times per re-test measurement
(16 queued warm-up launches, a 5-launch pilot, 50 repetitions: about 20 s), a short kernel's
timing is what it was. The repetition rule itself is `stats.repetitions`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pragma_ncu.backends.cpu.worker import timing as cpu_timing
from pragma_ncu.backends.cuda.worker import timing as cuda_timing
from pragma_ncu.measure.stats import repetitions
from pragma_ncu.search.evaluator import Phases

RETEST, SEARCH = Phases().retest, Phases().search


@pytest.mark.parametrize(("pilot_us", "long_ms", "floor", "expected"), [
    (276_000.0, 600.0, 5, 5),   # a 276 ms launch: the floor, not 50 (13.8 s)
    (50_000.0, 600.0, 5, 12),   # 50 ms: as many as 600 ms hold, not 50 (2.5 s)
    (10_000.0, 600.0, 5, 50),   # 10 ms: min_reps still fit in 600 ms
    (1_000.0, 600.0, 5, 150),   # 1 ms: the budget (150 ms) decides, as before
    (276_000.0, None, 5, 50),   # without long_ms: min_reps always, as before
    (276_000.0, 100.0, 3, 3),   # the search's floor
])
def test_min_reps_scale_with_a_long_launch(pilot_us: float, long_ms: float | None, floor: int,
                                           expected: int) -> None:
    assert repetitions(pilot_us, 0.0, 150.0, 50, 5000, long_ms, floor) == expected


@dataclass
class Clock:
    now: float = 0.0  # seconds

    def __call__(self) -> float:
        return self.now


@dataclass
class Event:
    gpu: FakeGpu
    at: float = 0.0

    def __sub__(self, other: Event) -> float:
        return (self.at - other.at) * 1e3  # ms, as CUDA events give

    def sync(self) -> None:
        self.gpu.clock.now = max(self.gpu.clock.now, self.at)


@dataclass
class FakeGpu:
    """A stream on a simulated clock: work queues behind the host, events fire when the work
    before them is done, a sync waits for it. Counts the kernel's launches."""

    kernel_s: float
    clock: Clock = field(default_factory=Clock)
    busy_until: float = 0.0
    launches: int = 0

    def enqueue(self, seconds: float) -> None:
        self.clock.now += 5e-6  # the host's cost of a launch
        self.busy_until = max(self.busy_until, self.clock.now) + seconds

    def launch_kernel(self, **_: Any) -> None:
        self.launches += 1
        self.enqueue(self.kernel_s)

    def sync(self) -> None:
        self.clock.now = max(self.clock.now, self.busy_until)

    def record(self, event: Event | None = None) -> Event:
        event = event or Event(self)
        event.at = max(self.busy_until, self.clock.now)
        return event


class Flusher:
    def __init__(self, gpu: FakeGpu) -> None:
        self.gpu = gpu

    def __call__(self) -> None:
        self.gpu.enqueue(20e-6)

    def hold(self, microseconds: float) -> None:
        self.gpu.enqueue(microseconds * 1e-6)


class Workspace:
    def restore_inouts(self) -> None:
        """Nothing to restore: no inouts."""


def timed(kernel_s: float, cfg: Any) -> tuple[FakeGpu, Any]:
    gpu = FakeGpu(kernel_s)
    got = cuda_timing.time_launch(gpu, Workspace(), gpu.launch_kernel, Flusher(gpu),  # type: ignore[arg-type]
                                  cfg, clock=gpu.clock)
    return gpu, got


def test_a_long_launch_warms_itself_up_and_is_its_own_pilot() -> None:
    """276 ms: 2 warm-up launches, 1 pilot, 5 repetitions in a re-test (8 launches, 2.2 s of
    GPU time; 71 before), 2 + 1 + 3 in the search."""
    gpu, got = timed(0.276, RETEST)
    assert got.reps == 5 and gpu.launches == 8
    assert got.median_us == pytest.approx(276_000.0)
    gpu, got = timed(0.276, SEARCH)
    assert got.reps == 3 and gpu.launches == 6


def test_a_short_launch_is_timed_as_before() -> None:
    """50 µs: warmed up for the warm-up's whole time, a 1 + 5 pilot, the budget's reps."""
    gpu, got = timed(50e-6, RETEST)
    assert got.reps == int(150_000 // 50)
    warm = gpu.launches - got.reps - 6
    assert warm * 50e-6 >= RETEST.warmup_ms / 1e3 * 0.9  # the warm-up's time, or nearly


def test_a_long_cpu_call_too() -> None:
    clock = Clock()
    calls = []

    def call() -> None:
        calls.append(clock.now)
        clock.now += 0.3

    got = cpu_timing.time_call(call, lambda: None, None, RETEST,
                               clock_ns=lambda: int(clock.now * 1e9))
    assert got.reps == 5 and len(calls) == 2 + 1 + 5
