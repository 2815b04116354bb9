"""The options that spread measurement over many workers (`--gpus`, `--workers`, `--ray`),
shared by autotune, tune and bench (the pool itself is opened by `pragma_ncu.api`; each
worker's count shows in the progress display, `cli/display.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from pragma_ncu import api
from pragma_ncu.api import bounds
from pragma_ncu.cli.common import bounded

F = Callable[..., Any]


def _gpus(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    try:
        return api.parse_gpus(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def pool_options(command: F) -> F:
    """--gpus, --workers and --ray, collected into one `pool` argument (a PoolRequest)."""
    command = click.option("--ray", "ray", metavar="auto|local|ADDRESS",
                     help="Run the workers as Ray actors (one GPU, or one CPU, each): auto "
                     "joins this host's cluster, local starts one on this host alone, else "
                     "the cluster's address. Needs pip install \"pragma-ncu[ray]\".")(command)
    command = click.option("--workers", "workers", type=bounded(bounds.COUNT),
                     help="C/C++ kernels: CPU worker processes measuring at once.")(command)
    command = click.option("--gpus", "gpus", callback=_gpus, metavar="all|N|0,2,...",
                     help="Measure on several GPUs at once, one worker each: all, a count, or "
                     "ordinals (one GPU by ordinal: 3,). Re-tests run on the first one.")(command)
    return command
