"""`pragma-ncu bench`: verify and time a kernel at its spec's shapes."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

import click

from pragma_ncu.bench import BenchReport, run_bench, worker_command
from pragma_ncu.cli.common import emit_json, load_task, parse_params, pick_shapes, progress_printer
from pragma_ncu.cli.pool_options import PoolRequest, open_pool, pool_options
from pragma_ncu.errors import NoGPUError, PragmaError
from pragma_ncu.pool.devices import GpuSelection
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.report import bench as render
from pragma_ncu.runner import Runner
from pragma_ncu.settings import Settings, load_settings
from pragma_ncu.spec import TaskSpec
from pragma_ncu.worker.protocol import TimingConfig


@click.command()
@click.option("--kernel", "kernel", required=True, type=click.Path(path_type=Path),
              help="The .cu file (its spec is the .toml beside it unless --spec is given).")
@click.option("--spec", type=click.Path(path_type=Path), help="The TOML task spec.")
@click.option("--shape", "shapes", multiple=True,
              help="A shape name from the spec, or dims as T=4096,d=11008 (repeatable).")
@click.option("--param", "params", multiple=True, help="Override a parameter: NAME=VALUE.")
@click.option("--arch", help="Compile for this arch (default: the GPU's; sm_90 without one).")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Seconds one shape may take before the worker is killed.")
@click.option("--budget-ms", type=float, default=100.0, show_default=True,
              help="GPU time spent in timed repetitions per shape.")
@click.option("--require-gpu", is_flag=True, help="Exit with status 3 when no GPU is present.")
@pool_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def bench(kernel: Path, spec: Path | None, shapes: tuple[str, ...], params: tuple[str, ...],
          arch: str | None, timeout: float, budget_ms: float, require_gpu: bool,
          gpus: GpuSelection | None, workers: int | None, ray: str | None,
          fmt: str) -> None:
    """Build, verify and time a kernel at each shape of its spec.

    Prints one row per shape: median time and spread, achieved GB/s (and TFLOP/s with the
    spec's metrics.flops), percent of the attainable roofline (the measured copy ceiling, or
    the measured compute ceiling where that binds) and of a same-size copy, registers, spills,
    theoretical
    occupancy and the verification status. With --gpus, the shapes are spread over the GPUs
    (each row names its GPU). Exit status: 0 all verified (or no GPU), 1 a shape failed, 2 bad
    input, 3 no GPU with --require-gpu.
    """
    settings = load_settings()
    task = load_task(kernel, spec)
    chosen = pick_shapes(task, shapes)
    timing = TimingConfig(budget_ms=budget_ms)
    show = progress_printer(fmt == "table" and sys.stderr.isatty())
    try:
        pool = _pool(task, settings, timeout, PoolRequest(gpus, workers, ray), show)
        # a pool closes its own workers; a Ray actor's runner has the Runner's interface
        with (contextlib.nullcontext(cast(Runner, pool.primary.runner)) if pool
              else Runner(worker_command(settings), timeout_s=timeout)) as runner:
            try:
                report = run_bench(task, chosen, settings, runner, params=parse_params(params),
                                   arch=arch, timing=timing, progress=show, pool=pool)
            finally:
                if pool is not None:
                    pool.close()
    except PragmaError as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        emit_json(render.bench_json(report))
    else:
        _print_table(report)
    sys.exit(_exit_code(report, require_gpu))


def _pool(task: TaskSpec, settings: Settings, timeout: float, req: PoolRequest,
          show: Callable[[str], None]) -> WorkerPool | None:
    """The pool --gpus asks for; without a GPU, None (bench then compiles and says so)."""
    try:
        return open_pool(task, settings, timeout, req, show)
    except NoGPUError:
        return None


def _print_table(report: BenchReport) -> None:
    for line in render.bench_header(report):
        click.echo(line)
    if not report.build.ok:
        click.echo(f"\n{report.build.log.strip()}")
        if report.build.entries:
            click.echo(f"entry points in the cubin: {', '.join(report.build.entries)}")
        return
    if report.device is None:
        click.echo(f"\nno GPU: {report.no_gpu_reason}\n"
                   "The kernel compiled (resources above); verification and timing need a CUDA "
                   "GPU. Run `pragma-ncu doctor` for what is missing.")
        return
    click.echo("")
    click.echo(render.bench_table(report))
    for line in render.failure_details(report):
        click.echo(f"  {line}")


def _exit_code(report: BenchReport, require_gpu: bool) -> int:
    if not report.build.ok:
        return 1
    if report.device is None:
        return 3 if require_gpu else 0
    return 0 if report.all_verified else 1
