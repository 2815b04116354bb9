"""Helpers shared by commands: loading specs and shapes with user-facing errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from pragma_ncu.errors import PragmaError, SpecError
from pragma_ncu.spec import ParamValue, Shape, TaskSpec
from pragma_ncu.specfile import load_spec, spec_path_for


def load_task(kernel: Path, spec: Path | None) -> TaskSpec:
    if not kernel.is_file():
        raise click.ClickException(f"kernel file not found: {kernel}")
    try:
        return load_spec(spec or spec_path_for(kernel), kernel)
    except PragmaError as exc:
        raise click.ClickException(str(exc)) from None


def pick_shapes(spec: TaskSpec, wanted: tuple[str, ...]) -> list[Shape]:
    """Shapes by name, or ad hoc as 'T=4096,d=11008'; all of the spec's when none are named."""
    if not wanted:
        return list(spec.shapes)
    shapes = []
    for item in wanted:
        if "=" in item:
            try:
                dims = tuple((k.strip(), int(v)) for k, v in
                             (part.split("=") for part in item.split(",")))
            except ValueError:
                raise click.BadParameter(f"{item!r}: expected NAME=INT[,NAME=INT...]",
                                         param_hint="--shape") from None
            shapes.append(Shape(item, dims))
        else:
            try:
                shapes.append(spec.shape_named(item))
            except SpecError as exc:
                raise click.BadParameter(str(exc), param_hint="--shape") from None
    return shapes


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
