"""The measurement cache of `autotune`: every measurement that says something of a point
(verified and timed, verified only, or refused by verification: a wrong answer, an
out-of-bounds write, an illegal access), keyed by everything that decides it, so that a rerun
measures nothing it already measured and an interrupted search resumes where it stopped.

What decides a measurement, and so its key: the compiled kernel (the build's cache key: its
source after rendering, the parameters, the compiler, its version and flags, the arch), the
spec (its file's bytes: inputs, tolerances, launch), the reference it is checked against (its
file's bytes, or the reference kernel's source), the shape, the phase with its timing and
seeds, the device (name and driver, or the host) and the code that verifies and times it
(`measuring_code`). A point measured on another device, driver or toolchain has another key
and is never reused. What is not the
point's doing is never kept: a timeout, a worker that died, a reference that failed.

The cache is a table of the run store (`.pragma-ncu/runs.sqlite` by default), written one
measurement at a time, each its own transaction, so that whatever a killed search measured is
there for the next one. Like the store, it knows nothing of the stages that fill it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pragma_ncu.build.compile import BuildResult
from pragma_ncu.infra.errors import InputError
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.search.evaluator import CHECK, RETEST, SEARCH, Evaluator
from pragma_ncu.search.parallel import PooledEvaluator
from pragma_ncu.search.space import Point
from pragma_ncu.spec.model import Shape

CACHED_PHASES = (SEARCH, RETEST, CHECK)  # not calibration: that measures the device
KEPT = frozenset({Status.OK, Status.WRONG_ANSWER, Status.OUT_OF_BOUNDS_WRITE,
                  Status.INPUT_MUTATED, Status.UNWRITTEN_OUTPUT, Status.RUNTIME_ERROR,
                  Status.LAUNCH_ERROR})
_SCHEMA = """
CREATE TABLE IF NOT EXISTS measurements (
    key TEXT PRIMARY KEY, created REAL NOT NULL, kernel TEXT NOT NULL, device TEXT NOT NULL,
    point TEXT NOT NULL, shape TEXT NOT NULL, phase TEXT NOT NULL, measurement TEXT NOT NULL);
"""


class CacheError(InputError):
    """The cache file cannot be opened or is not a SQLite file."""


@dataclass
class CacheCounts:
    """What one search asked of the cache: measurements answered from it, and measured."""

    reused: int = 0
    measured: int = 0


class MeasurementCache:
    """The `measurements` table of a SQLite file (the run store by default); safe to share
    between the search's threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.counts = CacheCounts()
        self._lock = threading.Lock()
        self._asked: dict[str, int] = {}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise CacheError(f"{self.path}: cannot open the measurement cache ({exc}); give "
                             "another --cache PATH, or --no-cache") from None

    def occurrence(self, key: str) -> str:
        """`key` for the n-th time this run asks for it: a run that measures the same thing
        again on purpose (the re-test's rounds) gets a measurement per asking, and a rerun,
        asking in the same order, gets each of them back."""
        with self._lock:
            n = self._asked.get(key, 0)
            self._asked[key] = n + 1
        return f"{key}#{n}"

    def count(self, reused: bool) -> None:
        """One asking answered from the cache (`reused`) or measured."""
        with self._lock:
            if reused:
                self.counts.reused += 1
            else:
                self.counts.measured += 1

    def get(self, key: str) -> Measurement | None:
        with self._lock:
            row = self._db.execute("SELECT measurement FROM measurements WHERE key = ?",
                                   (key,)).fetchone()
        if row is None:
            return None
        try:
            return Measurement.from_json(json.loads(row[0]))
        except (ValueError, KeyError, TypeError):
            return None  # a row this version cannot read is measured again

    def put(self, key: str, facts: Mapping[str, str], measurement: Measurement) -> None:
        data = json.dumps(measurement.to_json())
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, time.time(), facts["kernel"], facts["device"], facts["point"],
                 facts["shape"], facts["phase"], data))

    def size(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


@functools.cache
def measuring_code() -> str:
    """A hash of the code that verifies and times a point (the workers, the measurement rules,
    the harnesses): a measurement taken by other code is another measurement."""
    root = Path(__file__).resolve().parents[1]
    files = sorted(p for pattern in ("worker/**/*.py", "measure/**/*.py",
                                     "backends/*/worker/**/*", "backends/*/*.c")
                   for p in root.glob(pattern) if p.is_file() and "__pycache__" not in p.parts)
    return fingerprint(*(f"{p.relative_to(root)}\0".encode() + p.read_bytes() for p in files))


def fingerprint(*parts: bytes | str) -> str:
    """A hash of what decides a measurement beyond the build (the spec's bytes, the
    reference's), for `CachedEvaluator`'s context."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()


class CachedEvaluator:
    """An `Evaluator` that answers a measurement from the cache when it holds one for the same
    key, and keeps each new one the point is answerable for. `context` holds what the key
    needs beyond the call: the device's identity, the spec's and the reference's fingerprint,
    the measuring code's."""

    def __init__(self, inner: Evaluator, cache: MeasurementCache,
                 context: Mapping[str, str]) -> None:
        self.inner, self.cache, self.context = inner, cache, dict(context)
        self.limits = inner.limits

    def build(self, point: Point) -> BuildResult:
        return self.inner.build(point)

    def measure(self, point: Point, built: BuildResult, shape: Shape,
                phase: str) -> Measurement:
        if phase not in CACHED_PHASES or not built.ok:
            return self.inner.measure(point, built, shape, phase)
        facts = self._facts(point, built, shape, phase)
        key = self.cache.occurrence(fingerprint(json.dumps(facts, sort_keys=True)))
        held = self.cache.get(key)
        if held is not None:
            self.cache.count(reused=True)
            return held
        measured = self.inner.measure(point, built, shape, phase)
        self.cache.count(reused=False)
        if measured.status in KEPT:
            self.cache.put(key, facts, measured)
        return measured

    def _facts(self, point: Point, built: BuildResult, shape: Shape,
               phase: str) -> dict[str, str]:
        phases = getattr(self.inner, "phases", None)
        timing = phases.timing(phase) if phases is not None else None
        seeds = phases.seeds(phase) if phases is not None else ()
        return {**self.context, "kernel": built.kernel_name, "build": built.key,
                "symbol": built.symbol or "", "point": json.dumps(point, sort_keys=True),
                "shape": json.dumps({"name": shape.name, **shape.as_dict()}, sort_keys=True),
                "phase": phase, "seeds": json.dumps(list(seeds)),
                "timing": json.dumps(_plain(timing), sort_keys=True)}


def cached(evaluator: Evaluator, cache: MeasurementCache | None,
           context: Mapping[str, str]) -> Evaluator:
    """`evaluator` answering from `cache` (as it is without one). A pool's evaluator is
    wrapped lane by lane, so that the parallel search, which measures on each lane, reads the
    cache too."""
    if cache is None:
        return evaluator
    if isinstance(evaluator, PooledEvaluator):
        return evaluator.wrapped(lambda inner: CachedEvaluator(inner, cache, context))
    return CachedEvaluator(evaluator, cache, context)


def _plain(value: Any) -> Any:
    if value is None:
        return None
    fields = getattr(value, "__dataclass_fields__", None)
    return {name: getattr(value, name) for name in fields} if fields else repr(value)
