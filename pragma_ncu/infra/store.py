"""The run store: one SQLite file per project directory that keeps every run of `tune`.

Tables: runs, rounds, candidates (source hash and text, parameters, build result, verification,
timings, profile summary, report path), decisions. Every write is its own transaction in WAL
mode, so a run killed at any point leaves a consistent file that `tune --resume` can continue
from. Values arrive as plain data (JSON-serializable dicts); this module knows nothing of the
stages that produce them.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pragma_ncu.infra import sources
from pragma_ncu.infra.errors import InputError

DEFAULT_NAME = ".pragma-ncu/runs.sqlite"
SCHEMA_VERSION = 1
LATEST = ("latest", "last")  # what names the newest run
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, created REAL NOT NULL, kernel TEXT NOT NULL, spec_path TEXT NOT NULL,
    status TEXT NOT NULL, config TEXT NOT NULL, device TEXT NOT NULL DEFAULT '',
    finished REAL, summary TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS rounds (
    run_id TEXT NOT NULL REFERENCES runs(id), round INTEGER NOT NULL, started REAL NOT NULL,
    finished REAL, status TEXT NOT NULL, PRIMARY KEY (run_id, round));
CREATE TABLE IF NOT EXISTS candidates (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs(id),
    round INTEGER NOT NULL, created REAL NOT NULL, source_hash TEXT NOT NULL,
    source TEXT NOT NULL, params TEXT NOT NULL, status TEXT NOT NULL, verified INTEGER NOT NULL,
    objective_us REAL, build TEXT NOT NULL, measurements TEXT NOT NULL,
    profile_summary TEXT NOT NULL DEFAULT '{}', report_path TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS candidates_run ON candidates(run_id, round);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs(id),
    round INTEGER NOT NULL, created REAL NOT NULL, action TEXT NOT NULL, record TEXT NOT NULL);
"""


class StoreError(InputError):
    """The store file is not a pragma-ncu run store, or a run asked for does not exist."""


@dataclass(frozen=True)
class RunRow:
    id: str
    created: float
    kernel: str
    spec_path: str
    status: str  # running | done | failed | interrupted
    config: dict[str, Any]
    device: str
    finished: float | None
    summary: dict[str, Any]


@dataclass(frozen=True)
class CandidateRow:
    id: int
    run_id: str
    round: int
    source_hash: str
    source: str
    params: dict[str, Any]
    status: str
    verified: bool
    objective_us: float | None
    build: dict[str, Any]
    measurements: list[Any]
    profile_summary: dict[str, Any]
    report_path: str


def source_hash(text: str) -> str:
    return sources.digest(text)


class Store:
    """A run store file; open with `Store.open(path)`, close with `close()` (or `with`)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @staticmethod
    def open(path: Path) -> Store:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), isolation_level=None, timeout=30.0)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(_SCHEMA)
            _check_version(conn, path)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{path} is not a pragma-ncu run store: {exc}") from None
        except StoreError:
            conn.close()
            raise
        return Store(conn, path)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def create_run(self, kernel: str, spec_path: str, config: dict[str, Any],
                   device: str = "") -> str:
        run_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        with self._tx() as c:
            c.execute("INSERT INTO runs (id, created, kernel, spec_path, status, config, device)"
                      " VALUES (?, ?, ?, ?, 'running', ?, ?)",
                      (run_id, time.time(), kernel, spec_path, _dump(config), device))
        return run_id

    def set_run_status(self, run_id: str, status: str,
                       summary: dict[str, Any] | None = None) -> None:
        self.run(run_id)
        finished = time.time() if status in ("done", "failed") else None
        with self._tx() as c:
            c.execute("UPDATE runs SET status = ?, finished = ?, summary = COALESCE(?, summary)"
                      " WHERE id = ?", (status, finished,
                                        _dump(summary) if summary is not None else None, run_id))

    def run(self, run_id: str) -> RunRow:
        row = self.conn.execute("SELECT id, created, kernel, spec_path, status, config, device,"
                                " finished, summary FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.path}; known: "
                             f"{', '.join(r.id for r in self.runs()[-5:]) or 'none'}")
        return RunRow(row[0], row[1], row[2], row[3], row[4], _loads(row[5], row[0]), row[6],
                      row[7], _loads(row[8], row[0]))

    def resolve(self, run_id: str) -> RunRow:
        """The run named by `run_id`: an exact id, a unique prefix, or "latest"/"last"."""
        runs = self.runs()
        if run_id.lower() in LATEST:
            if not runs:
                raise StoreError(f"no runs in {self.path} yet; `pragma-ncu tune` records them")
            return max(runs, key=lambda r: (r.created, r.id))
        exact = [r for r in runs if r.id == run_id]
        matches = exact or [r for r in runs if run_id and r.id.startswith(run_id)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise StoreError(f"run {run_id!r} is ambiguous in {self.path}: it starts "
                             f"{len(matches)} runs ({', '.join(r.id for r in matches[:5])}); "
                             "give more of the id")
        known = ", ".join(r.id for r in runs[-5:]) or "none"
        raise StoreError(f"no run {run_id!r} in {self.path}; latest runs: {known} "
                         "(`pragma-ncu trace --list` shows all)")

    def runs(self) -> list[RunRow]:
        ids = [r[0] for r in self.conn.execute("SELECT id FROM runs ORDER BY created, id")]
        return [self.run(i) for i in ids]

    def begin_round(self, run_id: str, round_: int) -> None:
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO rounds (run_id, round, started, status)"
                      " VALUES (?, ?, ?, 'running')", (run_id, round_, time.time()))

    def close_round(self, run_id: str, round_: int, action: str,
                    record: dict[str, Any]) -> None:
        """The round's decision and its end, in one transaction: a round is finished exactly
        when its decision is stored."""
        with self._tx() as c:
            c.execute("INSERT INTO decisions (run_id, round, created, action, record)"
                      " VALUES (?, ?, ?, ?, ?)", (run_id, round_, time.time(), action,
                                                  _dump(record)))
            c.execute("UPDATE rounds SET finished = ?, status = 'done' WHERE run_id = ? AND"
                      " round = ?", (time.time(), run_id, round_))

    def discard_round(self, run_id: str, round_: int) -> None:
        """Forget what an interrupted round wrote, so that resuming runs it again cleanly."""
        with self._tx() as c:
            c.execute("DELETE FROM candidates WHERE run_id = ? AND round = ?", (run_id, round_))
            c.execute("DELETE FROM decisions WHERE run_id = ? AND round = ?", (run_id, round_))
            c.execute("DELETE FROM rounds WHERE run_id = ? AND round = ?", (run_id, round_))

    def rounds(self, run_id: str) -> list[tuple[int, str]]:
        """(round, status) in order."""
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT round, status FROM rounds WHERE run_id = ? ORDER BY round", (run_id,))]

    def add_candidate(self, run_id: str, round_: int, source: str, params: dict[str, Any],
                      status: str, objective_us: float | None, build: dict[str, Any],
                      measurements: list[Any], profile_summary: dict[str, Any] | None = None,
                      report_path: str = "") -> int:
        with self._tx() as c:
            cur = c.execute(
                "INSERT INTO candidates (run_id, round, created, source_hash, source, params,"
                " status, verified, objective_us, build, measurements, profile_summary,"
                " report_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, round_, time.time(), source_hash(source), sources.printable(source),
                 _dump(params),
                 status, int(status == "ok"), objective_us, _dump(build), _dump(measurements),
                 _dump(profile_summary or {}), report_path))
            return int(cur.lastrowid or 0)

    def candidates(self, run_id: str, round_: int | None = None) -> list[CandidateRow]:
        query = ("SELECT id, run_id, round, source_hash, source, params, status, verified,"
                 " objective_us, build, measurements, profile_summary, report_path"
                 " FROM candidates WHERE run_id = ?")
        args: tuple[Any, ...] = (run_id,)
        if round_ is not None:
            query, args = query + " AND round = ?", (run_id, round_)
        rows = self.conn.execute(query + " ORDER BY id", args).fetchall()
        return [CandidateRow(r[0], r[1], r[2], r[3], r[4], _loads(r[5], run_id), r[6], bool(r[7]),
                             r[8], _loads(r[9], run_id), _loads(r[10], run_id),
                             _loads(r[11], run_id),
                             r[12]) for r in rows]

    def decisions(self, run_id: str) -> list[tuple[int, str, dict[str, Any]]]:
        return [(r[0], r[1], _loads(r[2], run_id)) for r in self.conn.execute(
            "SELECT round, action, record FROM decisions WHERE run_id = ? ORDER BY id",
            (run_id,))]


def _check_version(conn: sqlite3.Connection, path: Path) -> None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if row is None:
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
    elif row[0] != str(SCHEMA_VERSION):
        raise StoreError(f"{path} has run-store schema {row[0]}; this pragma-ncu reads "
                         f"{SCHEMA_VERSION}")


def _loads(text: str, run_id: str) -> Any:
    """A JSON value the store holds; one that is not JSON (a store written by something
    else, or damaged) is the store's error, naming the run."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"run {run_id}: the run store holds a record that is not JSON "
                         f"({exc}); the store is damaged or not pragma-ncu's") from None


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)
