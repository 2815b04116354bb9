"""The ceilings a device was measured at, as `pragma-ncu ceilings` prints them."""

from __future__ import annotations

from tabulate import tabulate

from pragma_ncu.measure.ceilings import Ceiling, ComputeCeiling
from pragma_ncu.measure.roofline import COMPUTE_KINDS
from pragma_ncu.pool.ceilings import DeviceCeilings


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


def gpu_lines(measured: DeviceCeilings, sheet: dict[str, float]) -> list[str]:
    """A GPU's ceilings: the device and when, then each ceiling beside the datasheet's."""
    device, copy, compute = measured.device, measured.copy, measured.compute
    return [f"{device.summary()}; measured {compute.measured_at}"
            + (", cached" if compute.cached and copy.cached else ""),
            tabulate(ceiling_rows(copy, compute, sheet),
                     ["ceiling", "measured", "datasheet", "% of sheet", "how"],
                     tablefmt="simple", disable_numparse=True)]


def cpu_lines(measured: DeviceCeilings) -> list[str]:
    """A host's ceilings: its copy bandwidth and FP32 FMA rate over all its cores."""
    host, copy, compute = measured.device, measured.copy, measured.compute
    return [f"{host.summary()}; measured {compute.measured_at}",
            tabulate([["copy (read + write)", f"{copy.gbps:,.1f} GB/s", copy.method],
                      ["FP32 FMA", f"{compute.per_second['fp32_fma'] / 1e9:,.1f} GFLOP/s",
                       "microbenchmark, all cores"]], ["ceiling", "rate", "how"],
                     tablefmt="simple")]
