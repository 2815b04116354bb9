"""What the run store holds of tune runs, read back: a run's `Trace` (its row and the records
of the rounds it finished, which traces render) and the runs a store holds (`RunEntry`)."""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.infra.store import RunRow, Store, StoreError
from pragma_ncu.measure.records import RoundRecord


@dataclass(frozen=True)
class Trace:
    """A run and its rounds, in round order."""

    run: RunRow
    rounds: tuple[RoundRecord, ...]


@dataclass(frozen=True)
class RunEntry:
    """A run of the store: its row, and how many rounds it finished."""

    run: RunRow
    rounds: int


def load_trace(store: Store, run_id: str) -> Trace:
    """The trace of a run (id, unique prefix, or "latest"). Raises StoreError when the run is
    unknown or ambiguous, or a stored decision is not a round record."""
    run = store.resolve(run_id)
    by_round: dict[int, RoundRecord] = {}
    for number, _action, data in store.decisions(run.id):
        try:
            record = RoundRecord.from_json(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StoreError(f"run {run.id}, round {number}: the stored decision is not a "
                             f"round record ({type(exc).__name__}: {exc})") from None
        # A resumed run may redo a round; the later record is the one that counted.
        by_round[record.round] = record
    return Trace(run, tuple(by_round[k] for k in sorted(by_round)))


def run_entries(store: Store) -> tuple[RunEntry, ...]:
    """The store's runs, oldest first, each with the rounds it finished (its summary's count,
    else the decisions stored)."""
    return tuple(RunEntry(r, int(r.summary.get("rounds") or len(
        {n for n, _, _ in store.decisions(r.id)}))) for r in store.runs())
