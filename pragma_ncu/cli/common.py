"""Helpers shared by commands: parsing what the API does not (NAME=VALUE pairs), printing, and
the exit-code contract every command keeps (errors.ExitStatus, docs/trust.md): the API's errors
as click's (one line, the status of their kind), and the group that answers whatever a command
let through the same way, an interrupt with 130 and a bug with 70, never with a traceback."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from pragma_ncu import api
from pragma_ncu.api import bounds
from pragma_ncu.infra.errors import ExitStatus, PragmaError, exit_status, io_error


class CommandError(click.ClickException):
    """An error as click shows it ("Error: ..." on stderr) with the contract's exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        # some click versions declare exit_code a class variable; all read it from the instance
        self.exit_code = status  # type: ignore[misc,unused-ignore]


def click_error(exc: PragmaError) -> click.ClickException:
    """The contract's answer to a PragmaError: options that do not go together are usage
    errors naming the option (exit 2); every other error exits with its kind's status."""
    if isinstance(exc, api.UsageError):
        if exc.option:
            return click.BadParameter(str(exc), param_hint=exc.option)
        return click.UsageError(str(exc))
    return CommandError(str(exc), exit_status(exc))


@contextlib.contextmanager
def user_errors(*also: type[Exception], keep: tuple[type[Exception], ...] = (),
                status: ExitStatus = ExitStatus.INPUT) -> Iterator[None]:
    """The API's errors as click's (`click_error`); the errors in `also` exit with `status`
    (bad input unless told); those in `keep` pass through for the command to handle."""
    try:
        yield
    except keep:
        raise
    except Exception as exc:
        if isinstance(exc, also):
            raise CommandError(str(exc), status) from None
        if isinstance(exc, PragmaError):
            raise click_error(exc) from None
        raise


class ContractGroup(click.Group):
    """A command group whose commands keep the exit-code contract whatever they let through:
    a PragmaError exits with its kind's status, Ctrl-C with 130, an I/O error (a file that
    cannot be written or read, a full disk, standard output) with 2 and one line naming the
    path and the OS's reason, and anything else (a bug) with 70 and one line saying so;
    `--traceback` shows a bug's traceback instead. A closed pipe is click's to answer."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("\ninterrupted", err=True)
            raise click.exceptions.Exit(ExitStatus.INTERRUPTED) from None
        except PragmaError as exc:
            raise click_error(exc) from None
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise  # click answers a closed pipe itself
            _quiet_stdout()
            raise CommandError(io_error(exc), exit_status(exc)) from None
        except Exception as exc:
            if ctx.params.get("traceback"):
                raise
            raise CommandError(f"internal error, a bug in pragma-ncu ({type(exc).__name__}: "
                               f"{exc}); please report it with the output of `pragma-ncu "
                               "--traceback ...`", ExitStatus.INTERNAL) from None


def _quiet_stdout() -> None:
    """After an I/O error, standard output replaced by a sink if it cannot be flushed, so that
    the interpreter's last flush does not fail again with a second message."""
    try:
        sys.stdout.flush()
    except OSError:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until the process exits


class Number(click.FloatRange):
    """A float option: a finite number within its range. click's FloatRange lets "nan"
    through (it fails every comparison, so no bound rejects it) and "inf" where there is no
    upper bound: `triage --threshold nan` judged nothing a regression and exited 0."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number (expected {self._describe_range()})",
                      param, ctx)
        return number


def bounded(bound: bounds.Bound) -> click.ParamType:
    """The option type of a number `bound` allows: click's IntRange or a finite FloatRange
    (shown in --help) of the bound the API checks its argument against (`infra.bounds`), so
    that the command line and the library refuse the same values."""
    if bound.kind is int:
        return click.IntRange(min=bound.low, max=bound.high, min_open=bound.low_open)
    return Number(min=bound.low, max=bound.high, min_open=bound.low_open)


SECONDS = bounded(bounds.SECONDS)  # a timeout or a budget in seconds
kernel_name_option = click.option(
    "--kernel-name", "spec_kernel", metavar="NAME",
    help="Run the file's kernel NAME in place of the spec's kernel.name: one spec serves the "
    "variants of a kernel (the same arguments) in other files.")


def load_task(kernel: Path, spec: Path | None, kernel_name: str | None = None) -> api.TaskSpec:
    with user_errors():
        return api.load(kernel, spec, kernel_name)


def parse_params(items: tuple[str, ...]) -> dict[str, api.ParamValue]:
    out: dict[str, api.ParamValue] = {}
    for item in items:
        if "=" not in item:
            raise click.BadParameter(f"{item!r}: expected NAME=VALUE", param_hint="--param")
        key, value = item.split("=", 1)
        out[key.strip()] = _number(value.strip())
    return out


def _number(text: str) -> api.ParamValue:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def emit_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")

