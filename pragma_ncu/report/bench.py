"""Rendering results for people (tables) and scripts (JSON-ready dicts)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tabulate import tabulate

from pragma_ncu.backends.results import BenchReport, BenchRow
from pragma_ncu.build.compile import BuildResult
from pragma_ncu.measure.ceilings import ComputeCeiling
from pragma_ncu.measure.roofline import COMPUTE_KINDS, MEMORY, attainable


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


def bench_rows(report: BenchReport) -> list[dict[str, Any]]:
    """One flat record per shape: what the table shows, as numbers."""
    res = report.build.resources
    ceiling = report.ceiling.gbps if report.ceiling else None
    out = []
    for row in report.rows:
        m = row.measurement
        t = m.timing
        bound = attainable(row.task.bytes_moved, row.task.flops, report.spec.compute, ceiling,
                           report.compute.per_second if report.compute else None)
        frac = bound.fraction(t.median_us) if bound and t else None
        out.append({
            "pct_of_roofline": 100 * frac if frac is not None else None,
            "bound_by": bound.binding if bound else None,
            "tflops": (row.task.flops / (t.median_us * 1e6) if row.task.flops and t
                       else None),
            "shape": row.shape.name, "dims": row.shape.label(), "status": m.status.value,
            "median_us": t.median_us if t else None,
            "spread_pct": t.spread_pct if t else None, "reps": t.reps if t else None,
            "timing_mode": t.mode if t else None, "gbps": m.gbps,
            "pct_of_ceiling": 100 * m.gbps / ceiling if m.gbps and ceiling else None,
            "pct_of_same_size_copy": (100 * m.copy_us / t.median_us
                                      if t and m.copy_us else None),
            "registers": res.registers if res else None,
            "spill_bytes": (res.spill_stores + res.spill_loads) if res else None,
            "occupancy_pct": 100 * m.occupancy if m.occupancy is not None else None,
            "message": m.message, "device": row.device or None,
        })
    return out


def bench_table(report: BenchReport) -> str:
    rows = bench_rows(report)
    flops = any(r["tflops"] is not None for r in rows)
    gpus = any(r["device"] for r in rows)  # shapes spread over several GPUs
    headers = ["shape", *(["GPU"] if gpus else []), "median µs", "spread", "GB/s",
               *(["TFLOP/s"] if flops else []), "% roofline", "bound by", "% copy", "regs",
               "spill B", "occupancy", "status"]
    table = []
    for r in rows:
        table.append([
            r["shape"], *([r["device"] or "-"] if gpus else []), _fmt(r["median_us"], ".2f"),
            _fmt(r["spread_pct"], ".1f", "%"),
            _fmt(r["gbps"], ".0f"), *([_fmt(r["tflops"], ".2f")] if flops else []),
            _fmt(r["pct_of_roofline"], ".1f"), _short_binding(r["bound_by"]),
            _fmt(r["pct_of_same_size_copy"], ".1f"), r["registers"], r["spill_bytes"],
            _fmt(r["occupancy_pct"], ".0f", "%"), r["status"],
        ])
    return tabulate(table, headers=headers, disable_numparse=True)


def _short_binding(binding: str | None) -> str:
    return "-" if binding is None else ("memory" if binding == MEMORY else binding)


def bench_header(report: BenchReport) -> list[str]:
    lines = [f"kernel  {report.spec.kernel_name} ({report.spec.source_path})"
             + (f"  params {report.params}" if report.params else "")]
    lines.append(build_line(report.build))
    if report.device is not None:
        lines.append(f"device  {report.device.summary()}")
    if report.ceiling is not None:
        c = report.ceiling
        lines.append(f"ceiling {c.gbps:.0f} GB/s device copy ({c.method}; measured "
                     f"{c.measured_at}{', cached' if c.cached else ''})")
    if report.compute is not None:
        lines.append("compute " + compute_line(report.compute))
    return lines


def compute_line(ceiling: ComputeCeiling) -> str:
    """The measured compute ceilings in one line (TFLOP/s; the SFU in T op/s)."""
    shown = [f"{COMPUTE_KINDS[k][1]} {ceiling.per_second[v] / 1e12:.1f}"
             for k, (v, _) in COMPUTE_KINDS.items() if v in ceiling.per_second]
    vendor = [f"{k} {v:.1f}" for k, v in ceiling.vendor_tflops.items()]
    return ("; ".join(shown) + " T/s" + (f"; vendor GEMM {', '.join(vendor)} TFLOP/s"
                                         if vendor else "")
            + f" (measured {ceiling.measured_at}{', cached' if ceiling.cached else ''})")


def build_line(built: BuildResult) -> str:
    if not built.ok:
        return f"build   {built.status} ({built.arch})"
    r = built.resources
    cached = "cached" if built.cache_hit else f"{built.seconds:.2f} s"
    if r is None:  # a target whose builds report no resources
        return f"build   {built.arch} ({cached})"
    return (f"build   {built.arch}: {r.registers} registers, {r.shared_static} B static smem, "
            f"{r.spill_stores + r.spill_loads} B spills, {r.stack} B stack ({cached})")


def failure_details(report: BenchReport) -> list[str]:
    return [f"{row.shape.name}: {row.measurement.status.value}: {row.measurement.message}"
            for row in report.rows if row.measurement.message]


def bench_json(report: BenchReport) -> dict[str, Any]:
    return {
        "kernel": report.spec.kernel_name, "source": str(report.spec.source_path),
        "params": report.params, "build": asdict(report.build),
        "device": report.device.to_json() if report.device else None,
        "no_gpu": report.no_device_reason,
        "ceiling": asdict(report.ceiling) if report.ceiling else None,
        "compute_ceiling": asdict(report.compute) if report.compute else None,
        "rows": bench_rows(report),
        "measurements": [row_json(r) for r in report.rows],
    }


def row_json(row: BenchRow) -> dict[str, Any]:
    return {"shape": row.shape.name, "dims": row.shape.as_dict(),
            "bytes_moved": row.task.bytes_moved, **row.measurement.to_json()}
