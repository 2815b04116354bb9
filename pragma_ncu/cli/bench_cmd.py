"""`pragma-ncu bench`: verify and time a kernel at its spec's shapes."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.api import bounds
from pragma_ncu.cli.common import (
    bounded,
    emit_json,
    kernel_name_option,
    load_task,
    parse_params,
    user_errors,
)
from pragma_ncu.cli.display import progress_display
from pragma_ncu.cli.pool_options import pool_options
from pragma_ncu.infra.errors import ExitStatus
from pragma_ncu.report import bench as render


@click.command()
@click.option("--kernel", "kernel", required=True, type=click.Path(path_type=Path),
              help="The .cu file (its spec is the .toml beside it unless --spec is given).")
@click.option("--spec", type=click.Path(path_type=Path), help="The TOML task spec.")
@kernel_name_option
@click.option("--shape", "shapes", multiple=True,
              help="A shape name from the spec, or dims as T=4096,d=11008 (repeatable).")
@click.option("--param", "params", multiple=True, help="Override a parameter: NAME=VALUE.")
@click.option("--arch", help="Compile for this arch (default: the GPU's; sm_90 without one).")
@click.option("--timeout", type=bounded(bounds.SECONDS), default=60.0, show_default=True,
              help="Seconds one shape may take before the worker is killed.")
@click.option("--budget-ms", type=bounded(bounds.MILLISECONDS), default=100.0, show_default=True,
              help="GPU time spent in timed repetitions per shape.")
@click.option("--require-gpu", is_flag=True, help="Exit with status 3 when no GPU is present.")
@pool_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def bench(kernel: Path, spec: Path | None, spec_kernel: str | None, shapes: tuple[str, ...],
          params: tuple[str, ...],
          arch: str | None, timeout: float, budget_ms: float, require_gpu: bool,
          gpus: api.GpuSelection | None, workers: int | None, ray: str | None,
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
    task = load_task(kernel, spec, spec_kernel)
    values = parse_params(params)
    with user_errors(), progress_display(fmt == "table" and sys.stderr.isatty()) as show:
        report = api.bench(task, shapes=shapes, params=values, arch=arch, timeout=timeout,
                           budget_ms=budget_ms, pool=api.PoolRequest(gpus, workers, ray),
                           progress=show)
    if fmt == "json":
        emit_json(render.bench_json(report))
    else:
        _print_table(report)
    sys.exit(_exit_code(report, require_gpu))


def _print_table(report: api.BenchReport) -> None:
    for line in render.bench_header(report):
        click.echo(line)
    if not report.build.ok:
        click.echo(f"\n{report.build.log.strip()}")
        if report.build.entries:
            click.echo(f"entry points in the cubin: {', '.join(report.build.entries)}")
        return
    if report.device is None:
        click.echo(f"\nno GPU: {report.no_device_reason}\n"
                   "The kernel compiled (resources above); verification and timing need a CUDA "
                   "GPU. Run `pragma-ncu doctor` for what is missing.")
        return
    click.echo("")
    click.echo(render.bench_table(report))
    for line in render.failure_details(report):
        click.echo(f"  {line}")


def _exit_code(report: api.BenchReport, require_gpu: bool) -> int:
    if report.build.status == "kernel_not_found":  # the spec names what is not there
        return ExitStatus.INPUT
    if not report.build.ok:
        return ExitStatus.VERDICT
    if report.device is None:
        return ExitStatus.ENVIRONMENT if require_gpu else ExitStatus.OK
    return ExitStatus.OK if report.all_verified else ExitStatus.VERDICT
