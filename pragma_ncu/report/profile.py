"""What `pragma-ncu profile` prints of a profiled instance, for each target's own record of it:
the CUDA target's ProfileRun (ncu's key metrics) and the CPU target's CpuRun (perf's or
cachegrind's counts); `lines` and `as_json` pick by the record's kind."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from pragma_ncu.backends import diagnose_in
from pragma_ncu.backends.cpu.profiling import CpuRun
from pragma_ncu.backends.cuda.profiling import ProfileRun
from pragma_ncu.errors import ExitStatus, exit_status
from pragma_ncu.knowledge.compendium import Compendium

KEY_METRICS = (
    ("duration", "gpu__time_duration.sum"),
    ("DRAM throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
    ("L2 throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("L1 throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
    ("SM throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("achieved occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    ("theoretical occupancy", "sm__maximum_warps_per_active_cycle_pct"),
    ("registers/thread", "launch__registers_per_thread"),
    ("shared mem/block", "launch__shared_mem_per_block"),
    ("tensor pipe", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"),
    ("issue slots busy", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
)


def exit_code(run: ProfileRun | CpuRun) -> int:
    """0 profiled; else the status of what stopped it (errors.exit_status): 1 the kernel fails
    (build, verification, a crash under ncu), 3 the environment (no GPU, no ncu, no permission
    to read the counters: timing only). A CPU run that fails raises instead."""
    kind = run.failure_kind()
    return ExitStatus.OK if kind is None else exit_status(kind)


def run_json(run: ProfileRun) -> dict[str, object]:
    data: dict[str, object] = {
        "kernel": str(run.spec.source_path), "shape": run.shape.name, "params": run.params,
        "build": run.build.to_json(), "device": run.device.name if run.device else None,
        "measurement": run.measurement.to_json() if run.measurement else None,
        "problem": run.problem or None,
    }
    if run.collection is not None:
        c = run.collection
        data["collection"] = {"status": str(c.status), "message": c.message,
                              "wall_s": round(c.wall_s, 2), "report": str(c.report or ""),
                              "log": str(c.log_path), "command": list(c.command)}
    if run.profile is not None:
        data["profile_json"] = str(run.profile_path)
        data["profile"] = run.profile.to_json()
    return data


def gpu_lines(run: ProfileRun, knowledge: Compendium) -> list[str]:
    """The table `pragma-ncu profile` prints for a kernel profiled under ncu."""
    out: list[str] = []
    m = run.measurement
    head = f"{run.spec.source_path.name} @ {run.shape.name} ({run.shape.label()})"
    out.append(head + (f" on {run.device.name}" if run.device else ""))
    if m is not None and m.timing is not None:
        out.append(f"verified, median {m.timing.median_us:,.1f} µs (±{m.timing.spread_pct:.1f}%)")
    if run.profile is None:
        out.append(f"\n{run.problem}")  # a failed build's: the compiler's first error lines
        return out
    k = run.profile.kernels[0]
    rows = [[label, name, _value(k.value(name), k.metrics[name].unit if name in k.metrics
                                 else "")] for label, name in KEY_METRICS]
    out.append(tabulate(rows, ["", "metric", "value"], tablefmt="simple"))
    ceiling = run.ceiling.gbps if run.ceiling else None
    d = diagnose_in(run.profile, k, knowledge, ceiling)
    if d.findings:
        f = d.findings[0]
        out.append(f"\nverdict: {f.bottleneck}: {f.title} (share {f.score:.2f})")
    assert run.collection is not None
    out.append(f"ncu took {run.collection.wall_s:.1f} s; report {run.collection.report}")
    out.append(f"profile: {run.profile_path}\nnext: pragma-ncu explain {run.profile_path}")
    return out


def cpu_json(run: CpuRun) -> dict[str, object]:
    return {"kernel": run.profile.collection.get("source_file"), "host": run.host.name,
            "collector": run.collector.name, "collector_reason": run.collector.reason,
            "measurements": [m.to_json() for m in run.measurements],
            "profile_json": str(run.profile_path), "profile": run.profile.to_json()}


def cpu_lines(run: CpuRun, knowledge: Compendium) -> list[str]:
    """The table `pragma-ncu profile` prints for a C/C++ function profiled on the CPU."""
    out: list[str] = []
    k = run.profile.kernels[0]
    m = run.measurements[0]
    out.append(f"{k.name} @ {run.profile.collection.get('shape')} on {run.host.name}")
    if m.timing is not None:
        out.append(f"verified, median {m.timing.median_us:,.1f} µs (±{m.timing.spread_pct:.1f}%)")
    out.append(f"profiled with {run.collector.name}"
               + (f" (simulated: {run.collector.reason})" if run.profile.collection.get(
                   "simulated") else ""))
    rows = [[name, _value(metric.value if not isinstance(metric.value, str) else None,
                          metric.unit)] for name, metric in list(k.metrics.items())[:16]]
    out.append(tabulate(rows, ["metric (per call)", "value"], tablefmt="simple"))
    d = diagnose_in(run.profile, k, knowledge)
    if d.findings:
        f = d.findings[0]
        out.append(f"\nverdict: {f.bottleneck}: {f.title}")
    out.append(f"profile: {run.profile_path}\nnext: pragma-ncu explain {run.profile_path}")
    return out


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "ratio":
        return f"{value:.3g}"
    return f"{value:,.1f} {unit}".strip() if abs(value) < 1e6 else f"{value:,.0f} {unit}".strip()


def lines(run: Any, knowledge: Compendium) -> list[str]:
    return cpu_lines(run, knowledge) if isinstance(run, CpuRun) else gpu_lines(run, knowledge)


def as_json(run: Any) -> dict[str, object]:
    return cpu_json(run) if isinstance(run, CpuRun) else run_json(run)
