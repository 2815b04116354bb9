"""A simulated GPU for the tune loop: recorded measurements and profiles, played back.

Each kernel source the loop may see (the original, a re-tuned variant of it, an LLM's reply) is
mapped, by the sha256 of its text, to a recording: the evaluations of a real search on the GPU
(tests/fixtures/tuner/*.results.json.gz) or a synthetic one. Points that were not recorded come
back as compile errors ("not recorded"), like points the GPU could not build. Profiles are
recorded ncu profiles (tests/fixtures/profiles/*/profile.json.gz).

A source-moves template (pragma_ncu.coder.moves) that was not recorded itself is played from
the recording of the source it renders at its defaults: a point with the moves' knobs at their
defaults is that source's point, any other is scaled by the planted `move_effects` ((knob,
value) -> a factor on the times, or a Status every measurement fails with; 1.0 when none is
planted: a move that changes nothing measurable). Its profile is `move_profiles`' for the
knob values of the point profiled, else the source's own.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from pragma_ncu.backends.cuda.session import Profiled
from pragma_ncu.build.compile import BuildResult, KernelResources, failed_build
from pragma_ncu.coder.moves.base import KNOB_PREFIX
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.measure.roofline import ComputeRate
from pragma_ncu.profile.profiles import KernelProfile, Profile, profile_from_json
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.results import Evaluation
from pragma_ncu.search.space import Point, point_key
from pragma_ncu.spec.model import Shape, TaskSpec
from pragma_ncu.spec.template import render_jinja
from tests.fakes.tuner import H200_LIMITS

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def load_profile(name: str) -> KernelProfile:
    with gzip.open(FIXTURES / "profiles" / name / "profile.json.gz", "rt") as fh:
        return profile_from_json(json.load(fh)).kernels[0]


@dataclass
class Clock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class SimBackend:
    """`recordings` and `profiles` are keyed by the text hash of a kernel source."""

    recordings: dict[str, list[Evaluation]]
    profiles: dict[str, KernelProfile]
    ceiling_gbps: float | None = 4199.0
    compute: ComputeRate | None = None
    compute_ceilings: dict[str, float] | None = None
    limits: Limits = H200_LIMITS
    device: str = "simulated H200"
    identity: str = "simulated H200, no driver"
    jitter_pct: float = 0.3
    seed: int = 0
    checks: dict[str, str] = field(default_factory=dict)  # text hash -> compile error
    clock_: Clock = field(default_factory=Clock)
    profiled: list[tuple[str, str]] = field(default_factory=list)  # (hash, point key)
    save_profiles: bool = False  # write each profile to out_dir/profile.json, as ncu runs do
    move_effects: dict[tuple[str, object], float | Status] = field(default_factory=dict)
    move_checks: dict[tuple[str, object], str] = field(default_factory=dict)  # -> compile error
    move_profiles: dict[tuple[tuple[str, object], ...], str] = field(default_factory=dict)
    collector: str = "ncu"  # what each profile records as its collector (recorded: ncu's)

    def clock(self) -> float:
        return self.clock_()

    def evaluator(self, spec: TaskSpec) -> SimEvaluator:
        key = self._key(spec)
        recs = self.recordings.get(key, [])
        knobs = _knob_defaults(spec) if key != text_hash(spec.source_path.read_text()) else {}
        return SimEvaluator({e.key: e for e in recs}, self.limits, self.clock_,
                            random.Random(f"{self.seed}-{key}"), self.jitter_pct,
                            self.ceiling_gbps, knobs, self.move_effects)

    def _key(self, spec: TaskSpec) -> str:
        """The recording a source plays: its own, or for a moves template that was not
        recorded, the recording of what it renders at its defaults."""
        text = spec.source_path.read_text()
        key = text_hash(text)
        if key in self.recordings or not _knob_defaults(spec):
            return key
        return text_hash(render_jinja(text, spec.default_params(), "sim"))

    def check(self, spec: TaskSpec) -> str | None:
        defaults = spec.default_params()
        planted = [e for (k, v), e in self.move_checks.items() if defaults.get(k) == v]
        return planted[0] if planted else self.checks.get(text_hash(spec.source_path.read_text()))

    def profile(self, spec: TaskSpec, point: Point, shape: Shape, out_dir: Path) -> Profiled:
        key = self._key(spec)
        self.profiled.append((key, point_key(point)))
        self.clock_.now += 8.0  # what an ncu run of one kernel costs
        knobs = tuple(sorted((k, v) for k, v in point.items() if k.startswith(KNOB_PREFIX)))
        planted = self.move_profiles.get(knobs)
        kernel = load_profile(planted) if planted else self.profiles.get(key)
        if kernel is None:
            return Profiled(None, "", "no recorded profile")
        path = ""
        if self.save_profiles:  # so that a resumed run can re-read the best's profile
            out_dir.mkdir(parents=True, exist_ok=True)
            Profile((kernel,), "sim", collector=self.collector).save(out_dir / "profile.json")
            path = str(out_dir / "profile.json")
        return Profiled(kernel, path, collector=self.collector)


def _knob_defaults(spec: TaskSpec) -> dict[str, object]:
    return {p.name: p.default for p in spec.params if p.name.startswith(KNOB_PREFIX)}


@dataclass
class SimEvaluator:
    records: dict[str, Evaluation]
    limits: Limits
    clock: Clock
    rng: random.Random
    jitter_pct: float
    ceiling_gbps: float | None
    knobs: dict[str, object] = field(default_factory=dict)  # a moves template's knob defaults
    effects: Mapping[tuple[str, object], float | Status] = field(default_factory=dict)

    def _record(self, point: Point) -> Evaluation | None:
        """The recorded evaluation of `point`; for a moves template, the source's at the
        point without the knobs, with the planted effects of the knobs' values."""
        if not self.knobs:
            return self.records.get(point_key(point))
        base = self.records.get(point_key({k: v for k, v in point.items()
                                           if k not in self.knobs}))
        if base is None:
            return None
        changed = [(k, v) for k, v in point.items() if k in self.knobs and v != self.knobs[k]]
        effects = [self.effects.get(kv, 1.0) for kv in changed]
        base = replace(base, point=dict(point))
        failing = [e for e in effects if isinstance(e, Status)]
        if failing:
            return with_status([base], failing[0])[0]
        factor = 1.0
        for e in effects:
            factor *= float(e)  # type: ignore[arg-type]
        return scaled([base], point, factor)[0] if factor != 1.0 else base

    def build(self, point: Point) -> BuildResult:
        rec = self._record(point)
        if rec is None:
            return failed_build("k", "sm_90", f"error: {point_key(point)} was not recorded")
        self.clock.now += rec.compile_s
        if rec.status in ("compile_error", "kernel_not_found"):
            return replace(failed_build("k", "sm_90", rec.message), status=rec.status)
        res = KernelResources(registers=rec.registers or 32, spill_stores=rec.spill_bytes)
        return BuildResult(status="ok", kernel_name="k", symbol="k", cubin_path="k.cubin",
                           resources=res, log="", arch="sm_90", command=(), key=rec.key,
                           seconds=rec.compile_s)

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        rec = self._record(point)
        assert rec is not None  # built above
        m = next((m for m in (*rec.measurements, *rec.checked) if m.shape == shape.name), None)
        if m is None:
            return Measurement(Status.WORKER_CRASH, shape.name, "not recorded at this shape")
        self.clock.now += max(m.seconds, 0.05)
        if m.timing is None:
            return m
        f = 1.0 + self.rng.uniform(-self.jitter_pct, self.jitter_pct) / 100.0
        t = m.timing
        timing = replace(t, median_us=t.median_us * f, mean_us=t.mean_us * f,
                         min_us=t.min_us * f, max_us=t.max_us * f, p10_us=t.p10_us * f,
                         p90_us=t.p90_us * f)
        copy_us = m.copy_us
        if copy_us is None and m.bytes_moved and self.ceiling_gbps:
            copy_us = m.bytes_moved / (self.ceiling_gbps * 1e3)
        return replace(m, timing=timing, copy_us=copy_us)


def rekeyed(evaluations: list[Evaluation], point: Point, new_point: Point) -> list[Evaluation]:
    """The evaluation recorded at `point`, as if it were the only point of another kernel (the
    naive original that the template reproduces at its defaults)."""
    ev = next(e for e in evaluations if e.key == point_key(point))
    return [replace(ev, index=0, point=dict(new_point))]


def with_status(evaluations: list[Evaluation], status: Status) -> list[Evaluation]:
    """The same points, every measurement failing with `status` (a wrong-answer candidate)."""
    out = []
    for e in evaluations:
        if not e.ok:
            out.append(e)
            continue
        ms = tuple(Measurement(status, m.shape, f"planted {status.value}", seconds=m.seconds)
                   for m in e.measurements)
        out.append(replace(e, status=status.value, measurements=ms, checked=()))
    return out


def projected(evaluations: list[Evaluation], fixed: Mapping[str, object]) -> list[Evaluation]:
    """The evaluations whose point has the `fixed` values, with those parameters dropped: the
    recording of a kernel that has only the other knobs (e.g. the naive silu, which behaves like
    the templated one at VEC=1, ROWS=1)."""
    out: list[Evaluation] = []
    for e in evaluations:
        if all(e.point.get(k) == v for k, v in fixed.items()):
            point = {k: v for k, v in e.point.items() if k not in fixed}
            out.append(replace(e, index=len(out), point=point))
    return out


def scaled(evaluations: list[Evaluation], point: Point, factor: float) -> list[Evaluation]:
    """The same recording with every time of the evaluation at `point` multiplied by
    `factor` (< 1: a planted, much faster point)."""
    def faster(m: Measurement) -> Measurement:
        if m.timing is None:
            return m
        t = m.timing
        return replace(m, timing=replace(
            t, median_us=t.median_us * factor, mean_us=t.mean_us * factor,
            min_us=t.min_us * factor, max_us=t.max_us * factor, p10_us=t.p10_us * factor,
            p90_us=t.p90_us * factor, iqr_us=t.iqr_us * factor,
            stdev_us=t.stdev_us * factor))
    key = point_key(point)
    return [replace(e, measurements=tuple(faster(m) for m in e.measurements))
            if e.key == key else e for e in evaluations]


def failing_at(evaluations: list[Evaluation], point: Point, shape: str,
               status: Status = Status.WRONG_ANSWER) -> list[Evaluation]:
    """The same recording, the evaluation at `point` failing with `status` at `shape` (a tuned
    or a check shape) and right everywhere else."""
    key = point_key(point)

    def broken(ms: tuple[Measurement, ...]) -> tuple[Measurement, ...]:
        return tuple(Measurement(status, m.shape, f"planted {status.value} at {shape}",
                                 seconds=m.seconds) if m.shape == shape else m for m in ms)
    return [replace(e, status=status.value, measurements=broken(e.measurements),
                    checked=broken(e.checked)) if e.key == key else e for e in evaluations]
