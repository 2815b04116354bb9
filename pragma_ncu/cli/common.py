"""Helpers shared by commands: parsing what the API does not (NAME=VALUE pairs), printing, and
turning the API's errors into click's (a one-line message, the right exit status)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from pragma_ncu import api
from pragma_ncu.errors import PragmaError
from pragma_ncu.spec import ParamValue, TaskSpec
from pragma_ncu.store import StoreError


@contextlib.contextmanager
def user_errors(*also: type[Exception], keep: tuple[type[Exception], ...] = ()
                ) -> Iterator[None]:
    """The API's errors as click's: options that do not go together exit 2 (naming the option
    where there is one), everything else a PragmaError (or one of `also`) says exits 1; the
    errors in `keep` pass through for the command to handle."""
    try:
        yield
    except keep:
        raise
    except api.UsageError as exc:
        if exc.option:
            raise click.BadParameter(str(exc), param_hint=exc.option) from None
        raise click.UsageError(str(exc)) from None
    except Exception as exc:
        if isinstance(exc, (PragmaError, StoreError, *also)):
            raise click.ClickException(str(exc)) from None
        raise


def load_task(kernel: Path, spec: Path | None) -> TaskSpec:
    with user_errors():
        return api.load(kernel, spec)


def parse_params(items: tuple[str, ...]) -> dict[str, ParamValue]:
    out: dict[str, ParamValue] = {}
    for item in items:
        if "=" not in item:
            raise click.BadParameter(f"{item!r}: expected NAME=VALUE", param_hint="--param")
        key, value = item.split("=", 1)
        out[key.strip()] = _number(value.strip())
    return out


def _number(text: str) -> ParamValue:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def emit_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def progress_printer(enabled: bool) -> Callable[[str], None]:
    def show(message: str) -> None:
        if enabled:
            click.echo(f"  .. {message}", err=True)
    return show
