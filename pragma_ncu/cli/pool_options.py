"""The options that spread measurement over many workers (`--gpus`, `--workers`, `--ray`),
shared by autotune, tune and bench (the pool itself is opened by `pragma_ncu.api`), and the
progress line of a search on many workers."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from pragma_ncu.pool import devices
from pragma_ncu.pool.workers import LaneActivity, WorkerPool
from pragma_ncu.search.results import Evaluation

F = Callable[..., Any]


def _gpus(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    try:
        return devices.parse_gpus(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def pool_options(command: F) -> F:
    """--gpus, --workers and --ray, collected into one `pool` argument (a PoolRequest)."""
    command = click.option("--ray", "ray", metavar="auto|local|ADDRESS",
                     help="Run the workers as Ray actors (one GPU, or one CPU, each): auto "
                     "joins this host's cluster, local starts one on this host alone, else "
                     "the cluster's address. Needs pip install \"pragma-ncu[ray]\".")(command)
    command = click.option("--workers", "workers", type=click.IntRange(1),
                     help="C/C++ kernels: CPU worker processes measuring at once.")(command)
    command = click.option("--gpus", "gpus", callback=_gpus, metavar="all|N|0,2,...",
                     help="Measure on several GPUs at once, one worker each: all, a count, or "
                     "ordinals (one GPU by ordinal: 3,). Re-tests run on the first one.")(command)
    return command


def pool_progress(pool: WorkerPool, enabled: bool,
                  every_s: float = 5.0) -> Callable[[Evaluation, Evaluation | None], None]:
    """One line for the whole pool: points and points per second, each worker's count (and
    deaths, or that it was dropped), and the best so far; redrawn in place on a terminal,
    else printed every `every_s` seconds."""
    tty = sys.stderr.isatty()
    state = {"n": 0, "last": 0.0}

    def show(ev: Evaluation, best: Evaluation | None) -> None:
        state["n"] += 1
        now = time.monotonic()
        if not enabled or (not tty and now - state["last"] < every_s):
            return
        state["last"] = now
        rate = state["n"] / ev.elapsed_s if ev.elapsed_s > 0 else 0.0
        top = f"best {best.objective:.2f} µs" if best and best.objective else "no best yet"
        head = f"  [{state['n']} points, {rate:.1f}/s]"
        width = shutil.get_terminal_size((100, 24)).columns - 1
        line = f"{head} {'  '.join(_lane(a, True) for a in pool.activity())}  {top}"
        if len(line) > width:  # what each one measures only where it fits
            line = f"{head} {'  '.join(_lane(a, False) for a in pool.activity())}  {top}"
        click.echo(line.ljust(min(width, 100)) + ("\r" if tty else "\n"), err=True, nl=False)
    return show


def _lane(a: LaneActivity, current: bool) -> str:
    """gpu1 206 (1 died) [BM=128,BN=64,...]: its count, its deaths, what it measures now."""
    if a.dropped:
        return f"{a.label} dropped"
    return (f"{a.label} {a.done}" + (f" ({a.deaths} died)" if a.deaths else "")
            + (f" [{a.current}]" if current and a.current else ""))
