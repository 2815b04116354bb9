"""The options that spread measurement over many workers (`--gpus`, `--workers`, `--ray`),
shared by autotune, tune and bench, and the pool they open."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from pragma_ncu.backends.cpu.profiling import cpu_runner
from pragma_ncu.bench import worker_command
from pragma_ncu.pool import devices
from pragma_ncu.pool.workers import LaneActivity, Slot, WorkerPool, WorkerRunner
from pragma_ncu.runner import DeviceInfo, HostInfo, Runner
from pragma_ncu.search.results import Evaluation
from pragma_ncu.settings import Settings
from pragma_ncu.spec import TaskSpec

F = Callable[..., Any]


@dataclass(frozen=True)
class PoolRequest:
    gpus: devices.GpuSelection | None = None
    workers: int | None = None
    ray: str | None = None

    @property
    def wanted(self) -> bool:
        return self.gpus is not None or self.workers is not None or self.ray is not None


def _gpus(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    try:
        return devices.parse_gpus(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def pool_options(f: F) -> F:
    """--gpus, --workers and --ray, collected into one `pool` argument (a PoolRequest)."""
    f = click.option("--ray", "ray", metavar="auto|local|ADDRESS",
                     help="Run the workers as Ray actors (one GPU, or one CPU, each): auto "
                     "joins this host's cluster, local starts one on this host alone, else "
                     "the cluster's address. Needs pip install \"pragma-ncu[ray]\".")(f)
    f = click.option("--workers", "workers", type=click.IntRange(1),
                     help="C/C++ kernels: CPU worker processes measuring at once.")(f)
    f = click.option("--gpus", "gpus", callback=_gpus, metavar="all|N|0,2,...",
                     help="Measure on several GPUs at once, one worker each: all, a count, or "
                     "ordinals (one GPU by ordinal: 3,). Re-tests run on the first one.")(f)
    return f


def open_pool(task: TaskSpec, settings: Settings, timeout: float, req: PoolRequest,
              notice: Callable[[str], None]) -> WorkerPool | None:
    """The started pool the request asks for, or None for the usual single worker. Bad
    combinations are click errors; a host without the devices is a NoGPUError or PoolError."""
    if not req.wanted:
        return None
    if task.is_cpu and req.gpus is not None:
        raise click.UsageError("a C/C++ kernel runs on the CPU: use --workers N, not --gpus")
    if not task.is_cpu and req.workers is not None:
        raise click.UsageError("--workers is for C/C++ kernels on the CPU; a CUDA kernel "
                               "takes --gpus")
    if task.is_cpu and req.workers is None:
        raise click.UsageError("--ray with a C/C++ kernel needs --workers N")
    slots, make = (_ray(task, timeout, req) if req.ray is not None
                   else _local(task, settings, timeout, req))
    notice(f"starting {len(slots)} workers" + (" through Ray" if req.ray else ""))
    return WorkerPool(slots, make, notice=notice).start()


def _local(task: TaskSpec, settings: Settings, timeout: float,
           req: PoolRequest) -> tuple[list[Slot], Callable[[Slot], WorkerRunner]]:
    if task.is_cpu:
        assert req.workers is not None
        return ([Slot(f"cpu{i}") for i in range(req.workers)],
                lambda _: cpu_runner(settings, timeout))
    assert req.gpus is not None
    env = dict(os.environ)  # passed through to the workers, with each one's pin
    try:
        chosen = devices.select(req.gpus, devices.list_gpus(settings.python, env))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--gpus") from None
    command = worker_command(settings)
    return (devices.gpu_slots(chosen, env),
            lambda slot: Runner(command, timeout_s=timeout, env=dict(slot.env)))


def _ray(task: TaskSpec, timeout: float,
         req: PoolRequest) -> tuple[list[Slot], Callable[[Slot], WorkerRunner]]:
    from pragma_ncu.pool import ray_workers

    if req.gpus is not None and req.gpus.ordinals:
        raise click.BadParameter("with --ray, --gpus takes all or a count: Ray places the "
                                 "workers", param_hint="--gpus")
    cpus = max(req.workers or 0, os.cpu_count() or 1) if task.is_cpu else None
    ray = ray_workers.connect(req.ray or "auto", cpus=cpus)
    count = req.workers if task.is_cpu else (req.gpus.count if req.gpus else None)
    slots = ray_workers.ray_slots(ray, "cpu" if task.is_cpu else "gpu", count)
    describe = HostInfo.from_json if task.is_cpu else DeviceInfo.from_json
    return slots, lambda slot: ray_workers.RayRunner(ray, slot, cpu=task.is_cpu,
                                                     timeout_s=timeout, describe=describe)


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
