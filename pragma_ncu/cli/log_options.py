"""`--verbose` and `--log-file PATH`, which every command takes (`main.py` adds them to each
command of the tree), and the handlers they put on the package's logger for the command's
time: stderr at the verbosity's level (warnings, -v what the run does, -vv every detail),
through the progress display so that a line never lands inside a bar; the file at every
level, whatever -v says. Progress lines stay the display's (the progress module's records go
to the file only)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from pragma_ncu.api import logs, progress
from pragma_ncu.cli.display import write

LEVELS = (logging.WARNING, logging.INFO, logging.DEBUG)  # by the count of -v
CONSOLE_FORMAT = "%(levelname)s %(name)s: %(message)s"
_META = "pragma_ncu.log_options"


class _Stderr(logging.Handler):
    """Log lines on stderr, written above the live display's bars."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            write(self.format(record))
        except Exception:  # a log line must never take the command down
            self.handleError(record)


def _not_progress(record: logging.LogRecord) -> bool:
    return not record.name.startswith(progress.__name__)


def log_options(command: click.Command) -> click.Command:
    """`command` with -v/--verbose (repeatable) and --log-file PATH (neither reaches the
    command's function: they set up the log before it runs)."""
    command.params.append(click.Option(
        ["-v", "--verbose"], count=True, expose_value=False, callback=_given,
        help="Say more on stderr: -v what the run does (worker starts and restarts, ncu and "
             "LLM requests, retries), -vv every detail (compile commands, LLM messages)."))
    command.params.append(click.Option(
        ["--log-file"], type=click.Path(dir_okay=False, path_type=Path),
        expose_value=False, callback=_given,
        help="Append the whole log (every level, whatever -v says) to this file."))
    return command


def commands(group: click.Command) -> Iterator[click.Command]:
    """Every command of the tree below `group` (the groups themselves not included)."""
    if isinstance(group, click.Group):
        for sub in group.commands.values():
            yield from commands(sub)
    else:
        yield group


def _given(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Collects both options, then sets the log up once both are known (click calls each
    option's callback, given or not)."""
    seen: dict[str, Any] = ctx.meta.setdefault(_META, {})
    seen[str(param.name)] = value
    if {"verbose", "log_file"} <= seen.keys():
        ctx.call_on_close(configure(seen["verbose"], seen["log_file"]))


def configure(verbosity: int, log_file: Path | None) -> Callable[[], None]:
    """Put the command's handlers on the package's logger; the function that takes them off
    again and restores its level (so that commands run one after another in one process, as
    tests do, each get their own)."""
    logger = logging.getLogger(logs.PACKAGE)
    before = logger.level
    stderr = _Stderr(LEVELS[min(verbosity, len(LEVELS) - 1)])
    stderr.setFormatter(logging.Formatter(CONSOLE_FORMAT))
    stderr.addFilter(_not_progress)
    handlers: list[logging.Handler] = [stderr]
    if log_file is not None:
        try:
            handlers.append(logs.file_handler(log_file))
        except OSError as exc:
            raise click.BadParameter(f"cannot write {log_file}: {exc.strerror}",
                                     param_hint="--log-file") from None
    for handler in handlers:
        logger.addHandler(handler)
    logger.setLevel(min(h.level for h in handlers))

    def undo() -> None:
        for handler in handlers:
            logger.removeHandler(handler)
            handler.close()
        logger.setLevel(before)
    return undo
