"""`pragma-ncu ceilings`: this GPU's measured copy and compute ceilings (the roofline's)."""

from __future__ import annotations

import sys
from dataclasses import asdict

import click
from tabulate import tabulate

from pragma_ncu import task as tasks
from pragma_ncu.backends.cpu import ceilings as peaks
from pragma_ncu.backends.cpu.profiling import cpu_runner
from pragma_ncu.backends.cpu.session import CEILING_BYTES
from pragma_ncu.bench import measured_compute, worker_command
from pragma_ncu.ceilings import Ceiling, ComputeCeiling, ceiling_for
from pragma_ncu.cli.common import emit_json
from pragma_ncu.cli.knowledge_cmd import load_compendium
from pragma_ncu.errors import NoGPUError, PragmaError
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.roofline import COMPUTE_KINDS, DATASHEET_KEYS
from pragma_ncu.runner import Runner
from pragma_ncu.settings import Settings, load_settings
from pragma_ncu.toolchain import find_nvcc


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
    settings = load_settings()
    if cpu:
        _cpu_ceilings(settings, refresh, fmt)
        return
    try:
        with Runner(worker_command(settings), timeout_s=600) as runner:
            device = runner.hello()
            nvcc = find_nvcc(settings)
            harness = tasks.build_harness(device.arch, nvcc, settings)
            assert harness.cubin_path is not None
            copy = ceiling_for(runner, harness.cubin_path, settings.cache_dir / "ceilings.json",
                               refresh=refresh)
            compute = measured_compute(runner, device.arch, nvcc, settings, refresh=refresh)
    except NoGPUError as exc:
        click.echo(f"no GPU: {exc.reason} (`pragma-ncu ceilings --cpu` measures this host's)",
                   err=True)
        sys.exit(3)
    except (PragmaError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    sheet = datasheet_for(device.name, load_compendium())
    if fmt == "json":
        emit_json({"device": asdict(device), "copy": asdict(copy), "compute": asdict(compute),
                   "datasheet": sheet})
        return
    click.echo(f"{device.name} (driver {device.driver}); measured {compute.measured_at}"
               + (", cached" if compute.cached and copy.cached else ""))
    click.echo(tabulate(ceiling_rows(copy, compute, sheet),
                        ["ceiling", "measured", "datasheet", "% of sheet", "how"],
                        tablefmt="simple", disable_numparse=True))


def datasheet_for(device_name: str, knowledge: Compendium) -> dict[str, float]:
    """The datasheet's rates of this GPU (knowledge/hardware.toml), keyed like the measured
    ones: TFLOP/s per compute unit and `copy_gbps` (its DRAM bandwidth); {} for a GPU not
    listed."""
    spec = knowledge.gpu(device_name)
    if spec is None:
        return {}
    sheet = {key: float(spec.values[name]) for key, name in DATASHEET_KEYS.items()
             if name in spec.values}
    if "dram_gbps" in spec.values:
        sheet["copy_gbps"] = float(spec.values["dram_gbps"])
    return sheet


def ceiling_rows(copy: Ceiling, compute: ComputeCeiling,
                 sheet: dict[str, float]) -> list[list[str]]:
    """One row per ceiling: measured, the datasheet's figure and the measured share of it."""
    def vs(measured: float, key: str, unit: str) -> list[str]:
        ref = sheet.get(key)
        return [f"{ref:,.0f} {unit}" if ref else "-",
                f"{100 * measured / ref:.0f}%" if ref else "-"]

    rows = [["copy (read + write)", f"{copy.gbps:,.0f} GB/s",
             *vs(copy.gbps, "copy_gbps", "GB/s"), copy.method]]
    for kind, (key, name) in COMPUTE_KINDS.items():
        if key not in compute.per_second:
            continue
        tera = compute.per_second[key] / 1e12
        unit = "Top/s" if kind == "sfu" else "TFLOP/s"
        rows.append([name, f"{tera:,.1f} {unit}", *vs(tera, key, unit),
                     "microbenchmark" + (" (mma.sync)" if "tensor" in kind else "")])
    rows += [[f"vendor {name}", f"{tflops:,.1f} TFLOP/s", "-", "-",
              f"{'torch' if 'torch' in name else 'cupy'} matmul (cuBLAS), 4096^3, random data"]
             for name, tflops in compute.vendor_tflops.items()]
    return rows


def _cpu_ceilings(settings: Settings, refresh: bool, fmt: str) -> None:
    try:
        with cpu_runner(settings, 600) as runner:
            host = runner.hello()
            copy = ceiling_for(runner, "", settings.cache_dir / "ceilings.json", refresh=refresh,
                               nbytes=CEILING_BYTES)
        compute = peaks.compute_ceiling_for(settings, host.cache_key, host.name, refresh)
    except (PragmaError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        emit_json({"host": asdict(host), "copy": asdict(copy), "compute": asdict(compute)})
        return
    click.echo(f"{host.name} ({host.cores} cores); measured {compute.measured_at}")
    click.echo(tabulate([["copy (read + write)", f"{copy.gbps:,.1f} GB/s", copy.method],
                         ["FP32 FMA", f"{compute.per_second['fp32_fma'] / 1e9:,.1f} GFLOP/s",
                          "microbenchmark, all cores"]], ["ceiling", "rate", "how"],
                        tablefmt="simple"))
