"""The search's nouns: one evaluated point, one re-tested candidate, the result of a search."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.measure.roofline import ComputeRate
from pragma_ncu.measure.stats import geomean
from pragma_ncu.pool.calibration import Calibration
from pragma_ncu.pool.workers import WorkerDevice
from pragma_ncu.search.space import Point, point_key


@dataclass(frozen=True)
class Budget:
    evaluations: int | None = None  # points compiled and measured (pruned ones are free)
    seconds: float | None = None  # wall time of the search phase

    def spent(self, evaluations: int, seconds: float) -> bool:
        return ((self.evaluations is not None and evaluations >= self.evaluations)
                or (self.seconds is not None and seconds >= self.seconds))


@dataclass(frozen=True)
class Evaluation:
    """One point: pruned, failed to build, failed at some shape, or verified everywhere."""

    index: int
    point: Point
    status: str  # "ok", "infeasible", "compile_error", "kernel_not_found" or a Measurement status
    message: str = ""
    reason: str = ""  # the feasibility code of a pruned point
    measurements: tuple[Measurement, ...] = ()  # at the tuned shapes, timed
    checked: tuple[Measurement, ...] = ()  # at the check shapes, verified only
    registers: int | None = None
    spill_bytes: int = 0
    compile_s: float = 0.0
    gpu_s: float = 0.0
    elapsed_s: float = 0.0  # since the search began, when this point was done
    device: WorkerDevice | None = None  # the worker that measured it (with many workers)

    @property
    def key(self) -> str:
        return point_key(self.point)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def objective(self) -> float | None:
        """Geometric mean over the shapes of the median time in µs; None unless verified."""
        return geomean_us(self.measurements) if self.ok else None

    def median_us(self, shape: str) -> float | None:
        for m in self.measurements:
            if m.shape == shape and m.timing is not None:
                return m.timing.median_us
        return None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["measurements"] = [m.to_json() for m in self.measurements]
        data["checked"] = [m.to_json() for m in self.checked]
        data["objective"] = self.objective
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> Evaluation:
        fields = {k: v for k, v in data.items() if k in Evaluation.__dataclass_fields__}
        fields["measurements"] = tuple(Measurement.from_json(m) for m in data["measurements"])
        fields["checked"] = tuple(Measurement.from_json(m) for m in data.get("checked", ()))
        fields["device"] = WorkerDevice.from_json(data.get("device"))
        return Evaluation(**fields)


def geomean_us(measurements: Sequence[Measurement]) -> float | None:
    times = [m.timing.median_us for m in measurements
             if m.status is Status.OK and m.timing is not None]
    if not times or len(times) != len(measurements) or min(times) <= 0:
        return None
    return geomean(times)


@dataclass(frozen=True)
class ShapeTime:
    """A re-tested candidate at one shape: the median over rounds and the noise seen."""

    shape: str
    median_us: float
    noise_us: float  # max(IQR of any round, spread of the round medians)
    rounds_us: tuple[float, ...]  # each round's median, in round order
    gbps: float | None = None
    copy_us: float | None = None
    flops: float | None = None  # the spec's metrics.flops at this shape
    # every round's samples, pooled (empty when some round's timing kept none): not written
    # to results.json, which keeps their count
    samples_us: tuple[float, ...] = ()

    @property
    def noise_pct(self) -> float:
        return 100.0 * self.noise_us / self.median_us if self.median_us > 0 else math.inf


@dataclass(frozen=True)
class Retest:
    point: Point
    status: str  # "ok" or the first failing Measurement status
    message: str = ""
    shapes: tuple[ShapeTime, ...] = ()
    is_incumbent: bool = False

    @property
    def key(self) -> str:
        return point_key(self.point)

    @property
    def objective(self) -> float | None:
        if self.status != "ok" or not self.shapes:
            return None
        return geomean([s.median_us for s in self.shapes])

    def at(self, shape: str) -> ShapeTime | None:
        return next((s for s in self.shapes if s.shape == shape), None)


FASTER = "faster"
NOT_FASTER = "not faster"
UNDECIDED = "undecided"


@dataclass(frozen=True)
class Comparison:
    """A candidate against the incumbent, from their interleaved re-test rounds (see
    `search.compare`): whether it is faster, with the interval that says so."""

    outcome: str  # FASTER, NOT_FASTER, or UNDECIDED (the interval is too wide to tell)
    speedup: float  # the incumbent's objective / the candidate's (medians)
    low: float | None  # the speedup's confidence interval; None: too few timings for one
    high: float | None
    confidence: float
    margin: float  # the smallest gain that counts (a fraction of the incumbent's time)
    rounds: int  # the rounds both were measured in
    noise_pct: float  # the larger noise of the two (ShapeTime.noise_pct), at the worst shape
    samples: int  # per-launch samples the interval rests on (0: the rounds' medians only)

    @property
    def text(self) -> str:
        """One line for messages: the speedup, its interval, and what it means."""
        got = f"{self.speedup:.2f}×"
        if self.low is not None and self.high is not None:
            got += (f" (interval {self.low:.2f}–{self.high:.2f}× at {self.confidence:.0%}, "
                    f"{self.rounds} rounds)")
        else:
            got += f" ({self.rounds} round(s): too few timings for an interval)"
        margin = f"{100 * self.margin:g}%"
        if self.outcome == FASTER:
            return f"{got} faster, beyond the {margin} margin"
        if self.outcome == NOT_FASTER:
            return f"{got}: not faster by the {margin} margin"
        return (f"too noisy to decide: {got}, noise {self.noise_pct:.0f}%; re-run on a quieter "
                "machine or with more re-test rounds")


@dataclass(frozen=True)
class Verdict:
    """The winner among the re-tested candidates and whether it beats the incumbent."""

    winner: Retest | None
    incumbent: Retest | None
    accepted: bool  # the winner is faster than the incumbent (see `search.compare`)
    speedup: float | None  # incumbent objective / winner objective
    reason: str
    comparison: Comparison | None = None  # the winner against the incumbent, when compared

    @property
    def undecided(self) -> bool:
        """The re-test could not tell whether the winner beats the incumbent."""
        return self.comparison is not None and self.comparison.outcome == UNDECIDED

    @property
    def chosen(self) -> Point | None:
        """The configuration to use: the winner when accepted, else the incumbent's."""
        pick = self.winner if self.accepted else self.incumbent
        return dict(pick.point) if pick is not None else None


@dataclass(frozen=True)
class SearchStats:
    space_size: int
    evaluated: int  # compiled (or tried to) and measured
    verified: int
    pruned: dict[str, int] = field(default_factory=dict)  # reason code -> points
    failed: dict[str, int] = field(default_factory=dict)  # status -> points
    wall_s: float = 0.0  # the whole search, re-test included
    search_s: float = 0.0
    retest_s: float = 0.0
    compile_s: float = 0.0  # summed over compiles (they overlap)
    gpu_s: float = 0.0
    cache_hits: int = 0
    time_to_within_2pct_s: float | None = None


@dataclass(frozen=True)
class WorkerSummary:
    """What one worker (one GPU) did in a search with many."""

    label: str
    name: str
    evaluated: int  # points it measured (pruned and unbuilt points are nobody's)
    points_per_s: float  # over the search's wall time
    deaths: int = 0  # its workers that died (crash, hang, killed) and were replaced
    dropped: str = ""  # why it was dropped, if it was


@dataclass(frozen=True)
class CacheUse:
    """What a run took from the measurement cache (search/cache.py): the file, the
    measurements it answered, and those measured now (over the whole run: every shape's
    search, the re-tests and the check shapes)."""

    path: str
    reused: int
    measured: int


@dataclass(frozen=True)
class SearchResult:
    kernel: str
    strategy: str
    seed: int
    shapes: tuple[str, ...]
    evaluations: tuple[Evaluation, ...]
    retests: tuple[Retest, ...]
    general: Verdict  # best geometric mean over the shapes
    per_shape: tuple[tuple[str, Verdict], ...]  # best at each shape
    stats: SearchStats
    device: str = ""
    ceiling_gbps: float | None = None
    compute: ComputeRate | None = None  # with the spec's FLOPs: the compute ceiling
    workers: tuple[WorkerSummary, ...] = ()  # with many workers: each one's share
    retest_device: WorkerDevice | None = None  # with many workers: the one that re-tested all
    calibration: Calibration | None = None  # with many workers: each one's speed, who was out
    files: tuple[tuple[str, str], ...] = ()  # what was written, by role (not in results.json)
    cache: CacheUse | None = None  # with the measurement cache on

    @property
    def points_per_s(self) -> float | None:
        """Points evaluated per second of search."""
        s = self.stats
        return s.evaluated / s.search_s if s.search_s > 0 else None

    @property
    def best_point(self) -> Point | None:
        """The configuration to use over all shapes (see `Verdict.chosen`)."""
        return self.general.chosen

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel, "strategy": self.strategy, "seed": self.seed,
            "shapes": list(self.shapes), "device": self.device,
            "ceiling_gbps": self.ceiling_gbps, "best_point": self.best_point,
            "compute": asdict(self.compute) if self.compute else None,
            "general": _verdict_json(self.general),
            "per_shape": {s: _verdict_json(v) for s, v in self.per_shape},
            "stats": asdict(self.stats), "points_per_s": self.points_per_s,
            "workers": [asdict(w) for w in self.workers],
            "retest_device": self.retest_device.to_json() if self.retest_device else None,
            "calibration": self.calibration.to_json() if self.calibration else None,
            "retests": [_retest_json(r) for r in self.retests],
            "evaluations": [e.to_json() for e in self.evaluations],
            "cache": asdict(self.cache) if self.cache else None,
        }


def _retest_json(r: Retest | None) -> dict[str, Any] | None:
    if r is None:
        return None
    data = asdict(r)
    for shape in data["shapes"]:  # thousands of floats per round: their count is enough here
        shape["samples"] = len(shape.pop("samples_us"))
    return {**data, "objective": r.objective}


def _verdict_json(v: Verdict) -> dict[str, Any]:
    return {"winner": _retest_json(v.winner), "incumbent": _retest_json(v.incumbent),
            "accepted": v.accepted, "speedup": v.speedup, "reason": v.reason,
            "comparison": asdict(v.comparison) if v.comparison is not None else None}
