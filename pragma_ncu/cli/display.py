"""What a long command shows on stderr while it works (stdout is for its results).

On a terminal, a live display drawn by tqdm at the terminal's width: each line said stays above,
the latest one sits at the bottom with the time it has taken so far (a compile, a profile, an
LLM call), and each counted phase has a bar (points or rounds done of how many, the rate, the
time left, the best so far and, on a pool, each worker's count). Elsewhere (a CI log, a pipe)
plain lines with no control characters: each line said, and a phase's count whenever another
tenth of its total is done or, for a phase without a total or a slow one, every 30 seconds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from tqdm import tqdm

from pragma_ncu import api
from pragma_ncu.api import progress
from pragma_ncu.report import terminal

PREFIX = "  .. "
STEP = 0.1  # a plain line each time another tenth of a phase's total is done
QUIET_S = 30.0  # and one at least this often while a phase goes on
TICK_S = 0.5  # how often the live display redraws the clocks
ROOM = 24  # the least a live bar keeps of the line (its percentage and bar)
LINE = "{desc}: {n_fmt}/{total_fmt}{unit} [{elapsed}<{remaining}, {rate_noinv_fmt}]{postfix}"
BAR = LINE.replace(": ", ": {percentage:3.0f}%|{bar}| ", 1)  # the line with a bar drawn in
COUNT = "{desc}: {n_fmt}{unit} [{elapsed}, {rate_noinv_fmt}]{postfix}"  # no total: no bar, no ETA
CLOCK = "{desc} [{elapsed}]"


@contextlib.contextmanager
def progress_display(enabled: bool, stream: IO[str] | None = None
                     ) -> Iterator[progress.Progress | None]:
    """The display to hand the API (None when not `enabled`), closed on the way out so that
    the command's results print below it: live when `stream` (stderr) is a terminal, plain
    lines otherwise."""
    if not enabled:
        yield None
        return
    out = stream or sys.stderr
    display: Live | Plain = Live(out) if out.isatty() else Plain(out)
    try:
        yield display
    finally:
        display.close()


def write(line: str, stream: IO[str] | None = None) -> None:
    """A whole line on stderr, above a live display's bars when there is one (the log's
    handler writes through this)."""
    tqdm.write(line, file=stream or sys.stderr)


@dataclass
class _Counted:
    """A phase as the plain display follows it."""

    begun: float
    last_line: float
    last_done: int = 0


class Plain:
    """Lines for a log: what is said, and a phase's count now and then (see the module)."""

    def __init__(self, stream: IO[str], clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.clock = stream, clock
        self.phases: dict[str, _Counted] = {}
        self._lock = threading.Lock()

    def __call__(self, event: progress.Event) -> None:
        with self._lock:
            if isinstance(event, progress.Advance):
                self._advance(event)
                return
            if isinstance(event, progress.Begin):
                now = self.clock()
                self.phases[event.phase] = _Counted(now, now)
            elif isinstance(event, progress.End):
                self.phases.pop(event.phase, None)
            if event.text:
                self._line(event.text)

    def _advance(self, event: progress.Advance) -> None:
        now = self.clock()
        phase = self.phases.setdefault(event.phase, _Counted(now, now))
        step = max(1, round(STEP * event.total)) if event.total else None
        due = (step is not None and event.done // step > phase.last_done // step) or (
            now - phase.last_line >= QUIET_S) or (event.total is not None
                                                  and event.done >= event.total)
        if due and event.done != phase.last_done:
            phase.last_line, phase.last_done = now, event.done
            self._line(meter_line(event, now - phase.begun))

    def _line(self, text: str) -> None:
        self.stream.write(PREFIX + text + "\n")
        self.stream.flush()

    def close(self) -> None:
        self.phases.clear()


def meter_line(event: progress.Advance, elapsed: float) -> str:
    """'search: 40/72 points [00:12<00:09,  3.25 points/s], best 71.23 µs; gpu0 20, gpu1 20'."""
    unit = f" {event.unit}" if event.unit else ""
    return tqdm.format_meter(event.done, event.total, elapsed, prefix=event.phase, unit=unit,
                             bar_format=LINE if event.total else COUNT,
                             postfix=event.details or None)


class Live:
    """The terminal's live display (see the module): tqdm bars at the terminal's width,
    redrawn every TICK_S so that the clocks move while nothing is reported."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.status: tqdm | None = None  # the latest line said, with its clock
        self.bars: dict[str, tqdm] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True)
        self._ticker.start()

    def __call__(self, event: progress.Event) -> None:
        with self._lock:
            if isinstance(event, progress.Note):
                self._say(event.text)
            elif isinstance(event, progress.Begin):
                self._begin(event)
            elif isinstance(event, progress.Advance):
                self._advance(event)
            else:
                self._end(event)

    def _bar(self, desc: str, total: int | None, unit: str, form: str) -> tqdm:
        return tqdm(total=total, desc=desc, unit=unit, bar_format=form, file=self.stream,
                    ncols=self._width(), leave=False, mininterval=0.1)

    def _width(self) -> int:
        """The terminal's width now (it may have been resized), less the last column, where a
        line would wrap: stderr's own size, else $COLUMNS, else 80."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):  # not a real terminal (a test's)
            columns = shutil.get_terminal_size().columns
        return max(20, columns - 1)

    def _draw(self, bar: tqdm) -> None:
        bar.ncols = self._width()
        bar.refresh()

    def _say(self, text: str) -> None:
        """A line said stays above; at the bottom it shows with its clock until the next."""
        write(PREFIX + text, self.stream)
        if self.status is None:
            self.status = self._bar(f"  {text}", None, "", CLOCK)
        else:
            self.status.set_description_str(f"  {text}", refresh=False)
            self.status.reset()

    def _begin(self, event: progress.Begin) -> None:
        if event.text:
            self._say(event.text)
        old = self.bars.pop(event.phase, None)
        if old is not None:
            old.close()
        unit = f" {event.unit}" if event.unit else ""
        self.bars[event.phase] = self._bar(f"  {event.phase}", event.total, unit,
                                           BAR if event.total else COUNT)

    def _advance(self, event: progress.Advance) -> None:
        bar = self.bars.get(event.phase)
        if bar is None:
            return
        if event.total != bar.total:
            bar.total = event.total
        bar.n = event.done
        bar.set_postfix_str(self._postfix(event), refresh=False)
        self._draw(bar)

    def _postfix(self, event: progress.Advance) -> str:
        """The best and the workers' counts; the point just measured too where the line
        keeps a bar of ROOM characters with it (tqdm cuts what does not fit)."""
        room = self._width() - ROOM - len(meter_line(event, 0.0))
        last = f"; last {event.last}" if event.last else ""
        return event.details + (last if len(last) <= room else "")

    def _end(self, event: progress.End) -> None:
        bar = self.bars.pop(event.phase, None)
        if bar is not None:
            bar.close()
        if event.text:
            write(PREFIX + event.text, self.stream)

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                for bar in (self.status, *self.bars.values()):
                    if bar is not None:
                        self._draw(bar)

    def close(self) -> None:
        self._stop.set()
        self._ticker.join()
        with self._lock:
            for bar in (*self.bars.values(), self.status):
                if bar is not None:
                    bar.close()
            self.bars.clear()
            self.status = None


def output_width(stream: IO[str] | None = None) -> int:
    """The width a command's text output is laid out to (pragma_ncu.report.terminal): $COLUMNS
    where set, else the terminal's when standard output is one, else 100 (a file, a pipe, a
    CI log); never below 60."""
    stream = stream or sys.stdout
    columns = api.configured_columns()
    if columns is None:
        try:
            if stream.isatty():
                columns = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, OSError, ValueError):  # not a real stream (a test's)
            columns = None
    return terminal.clamp(columns)
