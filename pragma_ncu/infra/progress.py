"""What a long run reports while it works: events for a display (or any callable) to show.

A `Note` is a line said along the way ("round 2/5: tune", "profiling at llama-7b"). A phase
that counts (a search's points, a re-test's rounds, a pool's shapes) reports `Begin`, then an
`Advance` as each unit finishes (how many of how many, the best so far, each worker's count),
then `End`. Every event has a `text`: the line a plain display prints. The library reports to
a `Progress` callable, or to nothing: displays live in the command line (`cli/display.py`), and
a library caller may pass `lambda e: print(e.text)`, a list's `append`, or None.

Code that reports only lines takes a `Notice` (a callable of str); `Meter` reports one phase
to a Progress, or, where the caller gave none, its first and last lines to a Notice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Note:
    """A line said along the way."""

    text: str


@dataclass(frozen=True)
class Begin:
    """A phase starts: `phase` names it (and keys its later events), `text` says what it
    does, `total` is how many `unit`s it will take when that is known."""

    phase: str
    text: str
    total: int | None = None
    unit: str = ""


@dataclass(frozen=True)
class WorkerCount:
    """One worker's share of a phase so far (a pool's GPU or CPU slot)."""

    label: str
    done: int
    deaths: int = 0
    dropped: bool = False

    @property
    def text(self) -> str:
        if self.dropped:
            return f"{self.label} dropped"
        return f"{self.label} {self.done}" + (f" ({self.deaths} died)" if self.deaths else "")


@dataclass(frozen=True)
class Advance:
    """A phase moved on: `done` of `total` units (the total may grow: a re-test that cannot
    decide adds rounds), the best objective so far, each worker's count, and the unit just
    finished (`last`: a point and its value)."""

    phase: str
    done: int
    total: int | None = None
    unit: str = ""
    best_us: float | None = None
    workers: tuple[WorkerCount, ...] = ()
    last: str = ""

    @property
    def counted(self) -> str:
        """'40/72 points', or '40 points' without a total."""
        of = f"/{self.total}" if self.total is not None else ""
        return f"{self.done}{of}" + (f" {self.unit}" if self.unit else "")

    @property
    def details(self) -> str:
        """The best so far and each worker's count: 'best 71.23 µs; gpu0 20, gpu1 19'."""
        parts = [f"best {self.best_us:.2f} µs"] if self.best_us is not None else []
        if self.workers:
            parts.append(", ".join(w.text for w in self.workers))
        return "; ".join(parts)

    @property
    def text(self) -> str:
        return f"{self.phase}: {self.counted}" + (f", {self.details}" if self.details else "")


@dataclass(frozen=True)
class End:
    """A phase is over; `text` sums it up ("" when there is nothing to add)."""

    phase: str
    text: str = ""


Event = Note | Begin | Advance | End
Progress = Callable[[Event], None]
Notice = Callable[[str], None]


def quiet(_: object) -> None:
    """Report nothing (the default of a Notice or a Progress)."""


def logged(progress: Progress | None) -> Progress:
    """`progress` (or nothing) with every event written to the log as well: lines at INFO,
    each step of a phase at DEBUG. The library's entry points report through this, so a run's
    log file reads like its console, with the details between the lines."""
    def report(event: Event) -> None:
        if isinstance(event, Advance):
            log.debug("%s%s", event.text, f" (last: {event.last})" if event.last else "")
        elif event.text:
            log.info("%s", event.text)
        if progress is not None:
            progress(event)
    return report


def notes(progress: Progress | None) -> Notice:
    """A Notice whose lines reach `progress` as Notes (nothing reaches None)."""
    if progress is None:
        return quiet
    sink = progress
    return lambda text: sink(Note(text))


class Meter:
    """One phase reported as it goes: `Begin` at once, `advance` per unit, `end` once.

    Without a `progress`, the phase's first and last lines go to `notice` instead, so that a
    caller who listens for lines only still hears what the phase did.
    """

    def __init__(self, progress: Progress | None, notice: Notice, phase: str, text: str,
                 total: int | None = None, unit: str = "") -> None:
        self.phase, self.total, self.unit = phase, total, unit
        self._progress, self._notice = progress, notice
        self._ended = False
        self._send(Begin(phase, text, total, unit))

    def advance(self, done: int, *, total: int | None = None, best_us: float | None = None,
                workers: tuple[WorkerCount, ...] = (), last: str = "") -> None:
        """`done` units of the phase are finished (`total`: a new total, when it grew)."""
        if total is not None:
            self.total = total
        self._send(Advance(self.phase, done, self.total, self.unit, best_us, workers, last))

    def end(self, text: str = "") -> None:
        """The phase is over (once; later calls do nothing)."""
        if not self._ended:
            self._ended = True
            self._send(End(self.phase, text))

    def _send(self, event: Event) -> None:
        if self._progress is not None:
            self._progress(event)
        elif not isinstance(event, Advance) and event.text:
            self._notice(event.text)
