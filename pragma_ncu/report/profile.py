"""What `pragma-ncu profile` prints of a profiled instance, for every target alike: its
`ProfileRun` (the target's collector, the metrics it shows first, how the collection went)."""

from __future__ import annotations

from tabulate import tabulate

from pragma_ncu.backends import diagnose_in
from pragma_ncu.backends.results import ProfileRun
from pragma_ncu.infra.errors import ExitStatus, exit_status
from pragma_ncu.knowledge.compendium import Compendium


def exit_code(run: ProfileRun) -> int:
    """0 profiled; else the status of what stopped it (errors.exit_status): 1 the kernel fails
    (build, verification, a crash under the collector), 3 the environment (no GPU, no ncu, no
    permission to read the counters: timing only)."""
    kind = run.failure_kind()
    return ExitStatus.OK if kind is None else exit_status(kind)


def as_json(run: ProfileRun) -> dict[str, object]:
    data: dict[str, object] = {
        "kernel": str(run.spec.source_path), "shape": run.shape.name, "params": run.params,
        "collector": run.collector, "collector_note": run.collector_note or None,
        "build": run.build.to_json() if run.build else None, "device": run.device_name,
        "measurement": run.measurement.to_json() if run.measurement else None,
        "measurements": [m.to_json() for m in run.measurements],
        "problem": run.problem or None,
    }
    if run.collection is not None:
        c = run.collection
        data["collection"] = {"status": c.status, "message": c.message,
                              "wall_s": round(c.wall_s, 2), "report": str(c.report or ""),
                              "log": str(c.log or ""), "command": list(c.command)}
    if run.profile is not None:
        data["profile_json"] = str(run.profile_path)
        data["profile"] = run.profile.to_json()
    return data


def lines(run: ProfileRun, knowledge: Compendium) -> list[str]:
    """The table `pragma-ncu profile` prints: the instance, its timing, the metrics the
    target shows first, the verdict, how the collection went and what to run next."""
    out = [f"{run.spec.source_path.name} @ {run.shape.name} ({run.shape.label()})"
           + (f" on {run.device_name}" if run.device_name else "")]
    m = run.measurement
    if m is not None and m.timing is not None:
        out.append(f"verified, median {m.timing.median_us:,.1f} µs (±{m.timing.spread_pct:.1f}%)")
    if run.profile is None:
        out.append(f"\n{run.problem}")  # a failed build's: the compiler's first error lines
        return out
    k = run.profile.kernels[0]
    out.append(_metrics_table(run))
    d = diagnose_in(run.profile, k, knowledge, run.ceiling.gbps if run.ceiling else None)
    if d.findings:
        f = d.findings[0]
        out.append(f"\nverdict: {f.bottleneck}: {f.title} (share {f.score:.2f})")
    if run.collection is not None:
        out.append(f"{run.collector} took {run.collection.wall_s:.1f} s; report "
                   f"{run.collection.report}")
    else:
        out.append(f"profiled with {run.collector}"
                   + (f" ({run.collector_note})" if run.collector_note else ""))
    out.append(f"profile: {run.profile_path}\nnext: pragma-ncu explain {run.profile_path}")
    return out


def _metrics_table(run: ProfileRun) -> str:
    """The metrics the target shows first: labelled where it labels them."""
    assert run.profile is not None
    k = run.profile.kernels[0]
    rows = [[label, name, _value(k.value(name), k.metrics[name].unit if name in k.metrics
                                 else "")] for label, name in run.key_metrics]
    if any(label for label, _ in run.key_metrics):
        return tabulate(rows, ["", "metric", "value"], tablefmt="simple")
    return tabulate([r[1:] for r in rows], ["metric", "value"], tablefmt="simple")


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "ratio":
        return f"{value:.3g}"
    return f"{value:,.1f} {unit}".strip() if abs(value) < 1e6 else f"{value:,.0f} {unit}".strip()
