"""`pragma-ncu ceilings`: this GPU's measured copy and compute ceilings (the roofline's)."""

from __future__ import annotations

import sys
from dataclasses import asdict

import click

from pragma_ncu import api
from pragma_ncu.cli.common import emit_json, user_errors
from pragma_ncu.infra.errors import ExitStatus, NoGPUError
from pragma_ncu.report.ceilings import cpu_lines, gpu_lines


@click.command()
@click.option("--refresh", is_flag=True, help="Measure again instead of using the cache.")
@click.option("--cpu", is_flag=True, help="This host's CPU ceilings instead (C/C++ kernels).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def ceilings(refresh: bool, cpu: bool, fmt: str) -> None:
    """Measure (or show the cached) ceilings of this GPU: the copy bandwidth, and the FP32,
    FP64, FP16/BF16 tensor-core and special-function rates, each by a microbenchmark, with
    the vendor GEMM (cuBLAS through cupy, when installed) beside them for reference.

    The attainable roofline of `bench`, `autotune`, `tune` and `explain` stands on these.
    Cached per device and driver. Exit status 3 without a GPU. With --cpu: this host's copy
    bandwidth and FP32 FMA rate over all cores, for C/C++ kernels.
    """
    try:
        with user_errors(RuntimeError, keep=() if cpu else (NoGPUError,),
                         status=ExitStatus.ENVIRONMENT):
            found = api.ceilings("cpu" if cpu else "cuda", refresh=refresh)
    except NoGPUError as exc:
        click.echo(f"no GPU: {exc.reason} (`pragma-ncu ceilings --cpu` measures this host's)",
                   err=True)
        sys.exit(ExitStatus.ENVIRONMENT)
    if cpu:
        _print_cpu(found.measured, fmt)
    else:
        _print(found, fmt)


def _print(found: api.Ceilings, fmt: str) -> None:
    device, copy, compute = found.measured.device, found.measured.copy, found.measured.compute
    if fmt == "json":
        emit_json({"device": device.to_json(), "copy": asdict(copy), "compute": asdict(compute),
                   "datasheet": found.datasheet})
        return
    click.echo("\n".join(gpu_lines(found.measured, found.datasheet)))


def _print_cpu(found: api.DeviceCeilings, fmt: str) -> None:
    if fmt == "json":
        emit_json({"host": found.device.to_json(), "copy": asdict(found.copy),
                   "compute": asdict(found.compute)})
        return
    click.echo("\n".join(cpu_lines(found)))
