"""`pragma-ncu ceilings`: this GPU's measured copy and compute ceilings (the roofline's)."""

from __future__ import annotations

import sys
from dataclasses import asdict

import click
from tabulate import tabulate

from pragma_ncu import api
from pragma_ncu.ceilings import DeviceCeilings
from pragma_ncu.cli.common import emit_json, user_errors
from pragma_ncu.errors import ExitStatus, NoGPUError
from pragma_ncu.report.ceilings import ceiling_rows


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
        emit_json({"device": asdict(device), "copy": asdict(copy), "compute": asdict(compute),
                   "datasheet": found.datasheet})
        return
    click.echo(f"{device.name} (driver {device.driver}); measured {compute.measured_at}"
               + (", cached" if compute.cached and copy.cached else ""))
    click.echo(tabulate(ceiling_rows(copy, compute, found.datasheet),
                        ["ceiling", "measured", "datasheet", "% of sheet", "how"],
                        tablefmt="simple", disable_numparse=True))


def _print_cpu(found: DeviceCeilings, fmt: str) -> None:
    host, copy, compute = found.device, found.copy, found.compute
    if fmt == "json":
        emit_json({"host": asdict(host), "copy": asdict(copy), "compute": asdict(compute)})
        return
    click.echo(f"{host.name} ({host.cores} cores); measured {compute.measured_at}")
    click.echo(tabulate([["copy (read + write)", f"{copy.gbps:,.1f} GB/s", copy.method],
                         ["FP32 FMA", f"{compute.per_second['fp32_fma'] / 1e9:,.1f} GFLOP/s",
                          "microbenchmark, all cores"]], ["ceiling", "rate", "how"],
                        tablefmt="simple"))
