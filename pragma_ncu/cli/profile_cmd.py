"""`pragma-ncu profile`: verify, time and profile one kernel at one shape under ncu."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from tabulate import tabulate

from pragma_ncu.backends.cpu.profiling import CpuRun, cpu_runner, profile_kernel
from pragma_ncu.bench import worker_command
from pragma_ncu.cli.common import emit_json, load_task, parse_params, pick_shapes, progress_printer
from pragma_ncu.cli.knowledge_cmd import load_compendium
from pragma_ncu.diagnose.engine import diagnose, diagnose_in
from pragma_ncu.errors import PragmaError
from pragma_ncu.profile.collect import (
    DEFAULT_SECTIONS,
    DIAGNOSIS_METRICS,
    CollectRequest,
    CollectStatus,
)
from pragma_ncu.profile.run import ProfileRun, run_profile
from pragma_ncu.runner import Runner
from pragma_ncu.settings import load_settings
from pragma_ncu.spec import target_of

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
EXIT_NO_COUNTERS = 4


def _csv(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(v.strip() for item in values for v in item.split(",") if v.strip())


def collect_request(metrics: tuple[str, ...], sections: tuple[str, ...], source: bool,
                    timeout: float) -> CollectRequest:
    return CollectRequest(sections=_csv(sections) or DEFAULT_SECTIONS,
                          metrics=DIAGNOSIS_METRICS + _csv(metrics), source=source,
                          timeout_s=timeout)


def profile_options(f: Any) -> Any:
    """The options `profile` and `explain foo.cu` share."""
    for option in reversed((
        click.option("--spec", type=click.Path(path_type=Path), help="The TOML task spec."),
        click.option("--shape", help="A shape name from the spec, or dims as T=4096,d=11008 "
                     "(default: the spec's first shape)."),
        click.option("--param", "params", multiple=True, help="Override a parameter: NAME=VALUE."),
        click.option("--arch", help="Compile for this arch (default: the GPU's)."),
        click.option("--metrics", multiple=True, help="Extra ncu metrics (comma-separated)."),
        click.option("--sections", multiple=True, help="ncu sections to collect instead of the "
                     f"default set ({', '.join(DEFAULT_SECTIONS)})."),
        click.option("--source/--no-source", default=False, show_default=True,
                     help="Also collect source counters (hot lines; slower)."),
        click.option("--out", type=click.Path(path_type=Path),
                     help="Folder for the report, log and profile.json "
                     "(default: pragma-ncu-profiles/<kernel>-<shape>)."),
        click.option("--timeout", type=float, default=180.0, show_default=True,
                     help="Seconds the ncu run may take before it is killed."),
    )):
        f = option(f)
    return f


def do_profile(kernel: Path, spec: Path | None, shape: str | None, params: tuple[str, ...],
               arch: str | None, metrics: tuple[str, ...], sections: tuple[str, ...],
               source: bool, out: Path | None, timeout: float, show: bool) -> ProfileRun:
    settings = load_settings()
    task = load_task(kernel, spec)
    chosen = pick_shapes(task, (shape,) if shape else ())[0]
    request = collect_request(metrics, sections, source, timeout)
    try:
        with Runner(worker_command(settings), timeout_s=timeout) as runner:
            return run_profile(task, chosen, settings, runner, worker_command(settings),
                               params=parse_params(params), arch=arch, request=request,
                               out_dir=out, progress=progress_printer(show))
    except PragmaError as exc:
        raise click.ClickException(str(exc)) from None


def do_cpu_profile(kernel: Path, spec: Path | None, shape: str | None,
                   params: tuple[str, ...], out: Path | None, timeout: float,
                   show: bool) -> CpuRun:
    """A C/C++ kernel: verified and timed in the CPU worker, then profiled with perf (or
    cachegrind where the CPU's counters cannot be read)."""
    settings = load_settings()
    task = load_task(kernel, spec)
    chosen = pick_shapes(task, (shape,) if shape else ())[0]
    folder = out or Path("pragma-ncu-profiles") / f"{task.kernel_name}-{chosen.name}"
    try:
        with cpu_runner(settings, timeout) as runner:
            return profile_kernel(task, chosen, settings, runner, folder, parse_params(params),
                                  progress=progress_printer(show))
    except PragmaError as exc:
        raise click.ClickException(str(exc)) from None


@click.command()
@click.option("--kernel", "kernel", required=True, type=click.Path(path_type=Path),
              help="The .cu file, or a .c/.cpp one for the CPU (its spec is the .toml beside "
              "it unless --spec is given).")
@profile_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def profile(kernel: Path, spec: Path | None, shape: str | None, params: tuple[str, ...],
            arch: str | None, metrics: tuple[str, ...], sections: tuple[str, ...], source: bool,
            out: Path | None, timeout: float, fmt: str) -> None:
    """Verify, time and profile a kernel at one shape under Nsight Compute.

    Keeps the .ncu-rep, ncu's log and a normalized profile.json; prints the key metrics and
    the verdict (run `pragma-ncu explain` on the profile.json for the full diagnosis). Exit
    status: 0 profiled, 1 build, verification or ncu failed, 2 bad input, 3 no GPU,
    4 timing only (no permission to read GPU counters).
    A C/C++ kernel (.c, .cpp) runs on the CPU and is profiled with Linux perf, or with
    valgrind's cachegrind (simulated counts) where the CPU's counters cannot be read.
    """
    show = fmt == "table" and sys.stderr.isatty()
    if target_of(kernel) == "cpu":
        cpu = do_cpu_profile(kernel, spec, shape, params, out, timeout, show)
        emit_json(cpu_json(cpu)) if fmt == "json" else _print_cpu(cpu)
        return
    run = do_profile(kernel, spec, shape, params, arch, metrics, sections, source, out, timeout,
                     show)
    if fmt == "json":
        emit_json(run_json(run))
    else:
        _print(run)
    sys.exit(exit_code(run))


def exit_code(run: ProfileRun) -> int:
    if run.profile is not None:
        return 0
    if run.build.ok and run.device is None:
        return 3
    if run.collection is not None and run.collection.status is CollectStatus.NO_PERMISSION:
        return EXIT_NO_COUNTERS
    return 1


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


def _print(run: ProfileRun) -> None:
    m = run.measurement
    head = f"{run.spec.source_path.name} @ {run.shape.name} ({run.shape.label()})"
    click.echo(head + (f" on {run.device.name}" if run.device else ""))
    if m is not None and m.timing is not None:
        click.echo(f"verified, median {m.timing.median_us:,.1f} µs (±{m.timing.spread_pct:.1f}%)")
    if run.profile is None:
        click.echo(f"\n{run.problem}")
        if not run.build.ok:
            click.echo(run.build.log.strip())
        return
    k = run.profile.kernels[0]
    rows = [[label, name, _value(k.value(name), k.metrics[name].unit if name in k.metrics
                                 else "")] for label, name in KEY_METRICS]
    click.echo(tabulate(rows, ["", "metric", "value"], tablefmt="simple"))
    ceiling = run.ceiling.gbps if run.ceiling else None
    d = diagnose_in(run.profile, k, load_compendium(), ceiling)
    if d.findings:
        f = d.findings[0]
        click.echo(f"\nverdict: {f.bottleneck}: {f.title} (share {f.score:.2f})")
    assert run.collection is not None
    click.echo(f"ncu took {run.collection.wall_s:.1f} s; report {run.collection.report}")
    click.echo(f"profile: {run.profile_path}\nnext: pragma-ncu explain {run.profile_path}")


def cpu_json(run: CpuRun) -> dict[str, object]:
    return {"kernel": run.profile.collection.get("source_file"), "host": run.host.name,
            "collector": run.collector.name, "collector_reason": run.collector.reason,
            "measurements": [m.to_json() for m in run.measurements],
            "profile_json": str(run.profile_path), "profile": run.profile.to_json()}


def _print_cpu(run: CpuRun) -> None:
    k = run.profile.kernels[0]
    m = run.measurements[0]
    click.echo(f"{k.name} @ {run.profile.collection.get('shape')} on {run.host.name}")
    if m.timing is not None:
        click.echo(f"verified, median {m.timing.median_us:,.1f} µs (±{m.timing.spread_pct:.1f}%)")
    click.echo(f"profiled with {run.collector.name}"
               + (f" (simulated: {run.collector.reason})" if run.profile.collection.get(
                   "simulated") else ""))
    rows = [[name, _value(metric.value if not isinstance(metric.value, str) else None,
                          metric.unit)] for name, metric in list(k.metrics.items())[:16]]
    click.echo(tabulate(rows, ["metric (per call)", "value"], tablefmt="simple"))
    d = diagnose(k, load_compendium(), None, str(run.profile.collection.get("source_file")))
    if d.findings:
        f = d.findings[0]
        click.echo(f"\nverdict: {f.bottleneck}: {f.title}")
    click.echo(f"profile: {run.profile_path}\nnext: pragma-ncu explain {run.profile_path}")


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "ratio":
        return f"{value:.3g}"
    return f"{value:,.1f} {unit}".strip() if abs(value) < 1e6 else f"{value:,.0f} {unit}".strip()
