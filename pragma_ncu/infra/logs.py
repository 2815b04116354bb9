"""The package's log: one line format, a file handler, a run's own log file, and a way to hand
every record to a handler for a while whatever the package's level.

Every module logs through `logging.getLogger(__name__)`, below the "pragma_ncu" logger. The
package configures no handler when used as a library (the application decides, as Python's
logging intends); the command line adds its own (`cli/log_options.py`), and `tune` keeps each
run's log beside its run store (`RunLog`, `captured`). What goes where, by level: INFO for what
a run does once or rarely (a worker started or restarted, an ncu command, an LLM request and
its reply in short, a retry); DEBUG for what it does per point (each compile command) and the
full text of every LLM message and reply. No handler ever sees an API key: none is logged.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "pragma_ncu"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
EARLY_LIMIT = 100_000  # records a RunLog keeps before its file is known


def formatter() -> logging.Formatter:
    """The one line format of every log file: time, level, module, message."""
    return logging.Formatter(FORMAT)


def file_handler(path: Path, level: int = logging.DEBUG) -> logging.FileHandler:
    """A handler appending to `path` (its folder made), at `level`, in the one format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setLevel(level)
    handler.setFormatter(formatter())
    return handler


class RunLog(logging.Handler):
    """A run's log file, whose name is known only once the run has its id: the records that
    come before `open(path)` are kept and written first, the later ones go straight there (a
    resumed run appends to its log)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self._early: list[logging.LogRecord] = []
        self._file: logging.FileHandler | None = None
        self.path: Path | None = None

    def open(self, path: Path) -> None:
        self.acquire()  # emit runs under the same lock: no record lands between the two
        try:
            self._file, self.path = file_handler(path), path
            for record in self._early:
                self._file.handle(record)
            self._early.clear()
        finally:
            self.release()

    def emit(self, record: logging.LogRecord) -> None:
        if self._file is not None:
            self._file.handle(record)
        elif len(self._early) < EARLY_LIMIT:
            self._early.append(record)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        super().close()


class _Forward(logging.Handler):
    """Hands a record to the root logger's handlers, as propagation would have, when it is
    at the level the package let through before `captured` lowered it."""

    def emit(self, record: logging.LogRecord) -> None:
        logging.getLogger().handle(record)


@contextlib.contextmanager
def captured(handler: logging.Handler) -> Iterator[None]:
    """While inside, every record of the package at `handler`'s level reaches `handler`,
    whatever level the package's logger has; the handlers above it (the application's) get
    the records they got before and no more: lowering the package's level must not make a
    library caller's console print our DEBUG lines."""
    logger = logging.getLogger(PACKAGE)
    level, propagate = logger.level, logger.propagate
    effective = logger.getEffectiveLevel()
    lower = handler.level < effective
    forward = _Forward(effective) if lower and propagate else None
    logger.addHandler(handler)
    if lower:
        logger.setLevel(handler.level or logging.DEBUG)
    if forward is not None:
        logger.propagate = False
        logger.addHandler(forward)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        if forward is not None:
            logger.removeHandler(forward)
        logger.setLevel(level)
        logger.propagate = propagate
