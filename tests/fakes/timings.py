"""Synthetic re-test timings: what a worker's interleaved rounds would send, from a planted
truth, for the acceptance rule's tests (`search.compare`).

A kernel whose true time is `us` is timed in `rounds` rounds of `reps` samples each. Three
kinds of noise, as seen on real machines:
- launch to launch: each sample is `us` times a log-normal factor whose interquartile range
  is `spread` (a fraction: 0.10 = an IQR of 10% of the median);
- round to round: each round's level is moved by a log-normal factor of sigma `round_sigma`
  (another process arriving, a clock changing between rounds);
- preemption (a busy host): a fraction `preempted` of the samples waits an extra time, uniform
  up to `stall_us`, as when the scheduler gives the core to another process mid-call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.measure.stats import summarize as timing
from pragma_ncu.search.results import Retest
from pragma_ncu.search.retest import summarize

IQR_OF_UNIT_NORMAL = 1.3489795


@dataclass(frozen=True)
class Noise:
    spread: float = 0.02
    round_sigma: float = 0.0
    preempted: float = 0.0
    stall_us: float = 0.0


def samples(us: float, noise: Noise, reps: int, rng: np.random.Generator) -> np.ndarray:
    """One round's samples of a kernel whose true time is `us`."""
    level = us * math.exp(rng.normal(0.0, noise.round_sigma)) if noise.round_sigma else us
    values = level * np.exp(rng.normal(0.0, noise.spread / IQR_OF_UNIT_NORMAL, reps))
    stalled = rng.random(reps) < noise.preempted
    return values + stalled * rng.uniform(0.0, noise.stall_us, reps)


def measurement(shape: str, values: np.ndarray, keep: bool = True) -> Measurement:
    """The worker's answer for one shape in one round (samples kept, as the re-test asks)."""
    return Measurement(Status.OK, shape, timing=timing(values.tolist(), keep_samples=keep))


def retest(times: dict[str, float], noise: Noise, *, rounds: int = 3, reps: int = 300,
           seed: int = 0, incumbent: bool = False, keep: bool = True) -> Retest:
    """A re-test of a kernel whose true time at each shape is `times[shape]`."""
    rng = np.random.default_rng(seed)
    by_shape = {shape: [measurement(shape, samples(us, noise, reps, rng), keep)
                        for _ in range(rounds)] for shape, us in times.items()}
    point = {"KERNEL": "incumbent" if incumbent else "candidate"}
    return summarize(point, by_shape, None, incumbent)
