"""`trace` as library calls: the reasoning trace of a tune run, and the runs a store holds."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from pragma_ncu.api.arguments import checked
from pragma_ncu.infra.store import DEFAULT_NAME, Store, StoreError
from pragma_ncu.measure.traces import RunEntry, Trace, load_trace, run_entries


@checked
def trace(run: str, *, store: Path = Path(DEFAULT_NAME)) -> Trace:
    """Every decision of tune run `run` (an id, a unique prefix of one, or "latest") in the
    run store `store`, with the rounds' records it rests on; StoreError (bad input) for a
    store or a run that is not there."""
    with _existing(store) as db:
        return load_trace(db, run)


@checked
def runs(*, store: Path = Path(DEFAULT_NAME)) -> tuple[RunEntry, ...]:
    """The runs of the store `store`, oldest first."""
    with _existing(store) as db:
        return run_entries(db)


@contextlib.contextmanager
def _existing(path: Path) -> Iterator[Store]:
    """The store at `path` (Store.open would create a missing file; reading must not)."""
    if not path.is_file():
        raise StoreError(f"no run store at {path}; `pragma-ncu tune` creates it, or point "
                         "--store at one")
    with Store.open(path) as db:
        yield db
