"""The ceilings a device was measured at, as the table `pragma-ncu ceilings` prints."""

from __future__ import annotations

from pragma_ncu.ceilings import Ceiling, ComputeCeiling
from pragma_ncu.roofline import COMPUTE_KINDS


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
