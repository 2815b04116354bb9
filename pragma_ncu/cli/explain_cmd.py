"""`pragma-ncu explain`: what limits a kernel, from a report, a profile or a .cu file."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pragma_ncu.ceilings import cached_compute_for_device, cached_for_device
from pragma_ncu.cli.common import emit_json
from pragma_ncu.cli.knowledge_cmd import load_compendium
from pragma_ncu.cli.profile_cmd import do_cpu_profile, do_profile, profile_options
from pragma_ncu.diagnose.engine import diagnose_in
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.errors import PragmaError
from pragma_ncu.profile.profiles import KernelProfile, Profile
from pragma_ncu.profile.read import read_report
from pragma_ncu.report.diagnosis import explain_markdown, explain_text
from pragma_ncu.settings import load_settings
from pragma_ncu.spec import target_of


@click.command()
@click.argument("target", type=click.Path(path_type=Path))
@click.option("--kernel", "kernel_name", help="Explain only this kernel (name or part of it).")
@click.option("--reader", type=click.Choice(["auto", "ncu_report", "csv"]), default="auto",
              show_default=True, help="How to read a .ncu-rep.")
@click.option("--ceiling-gbps", type=float,
              help="Memory ceiling for the roofline (default: the measured copy ceiling the "
              "profile recorded, else one this machine measured on the same GPU model, else a "
              "copy's practical 85% of ncu's DRAM peak).")
@profile_options
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json"]), default="table",
              show_default=True)
def explain(target: Path, kernel_name: str | None, reader: str, ceiling_gbps: float | None,
            spec: Path | None, shape: str | None, params: tuple[str, ...], arch: str | None,
            metrics: tuple[str, ...], sections: tuple[str, ...], source: bool, out: Path | None,
            timeout: float, fmt: str) -> None:
    """Explain what limits each kernel in TARGET, ranked by evidence.

    TARGET is a .ncu-rep (any program's, one or many kernels), a profile.json written by
    `profile`, a folder of `ncu --csv` exports (raw.csv, details.csv, source.csv), or a .cu
    file with its spec (profiled first, with the --shape/--param/... options). A C/C++ file
    (.c, .cpp) is verified, timed and profiled on the CPU with perf, or with cachegrind where
    the CPU's counters cannot be read; its verdict names the dominant top-down category, or
    the dominant simulated miss or mispredict cause.
    """
    profile = _load(target, reader, spec, shape, params, arch, metrics, sections, source, out,
                    timeout, fmt)
    kernels = _select(profile, kernel_name)
    knowledge = load_compendium()
    device = _device_name(kernels)
    cache = load_settings().cache_dir
    copy = cached_for_device(cache / "ceilings.json", device) if device else None
    compute = cached_compute_for_device(cache / "compute_ceilings.json", device) \
        if device else None
    ceiling = ceiling_gbps or profile.collection.get("ceiling_gbps") or (copy.gbps if copy
                                                                          else None)
    results = [(k, diagnose_in(profile, k, knowledge, ceiling,
                               compute.per_second if compute else None)) for k in kernels]
    _emit(results, profile, fmt)


def _device_name(kernels: list[KernelProfile]) -> str | None:
    """The report's GPU, to look up ceilings this machine measured on one like it."""
    names = {str(k.metrics["device__attribute_display_name"].value) for k in kernels
             if "device__attribute_display_name" in k.metrics}
    return names.pop() if len(names) == 1 else None


def _load(target: Path, reader: str, spec: Path | None, shape: str | None,
          params: tuple[str, ...], arch: str | None, metrics: tuple[str, ...],
          sections: tuple[str, ...], source: bool, out: Path | None, timeout: float,
          fmt: str) -> Profile:
    if target_of(target) == "cpu":
        return do_cpu_profile(target, spec, shape, params, out, timeout,
                              fmt == "table" and sys.stderr.isatty()).profile
    if target.suffix == ".cu":
        run = do_profile(target, spec, shape, params, arch, metrics, sections, source, out,
                         timeout, fmt == "table" and sys.stderr.isatty())
        if run.profile is None:
            raise click.ClickException(f"cannot explain {target.name}: {run.problem}")
        return run.profile
    try:
        return read_report(target, load_settings(), reader)
    except PragmaError as exc:
        raise click.ClickException(str(exc)) from None


def _select(profile: Profile, name: str | None) -> list[KernelProfile]:
    if name is None:
        return list(profile.kernels)
    chosen = [k for k in profile.kernels
              if name in (k.name, k.mangled, k.display_name) or name in k.display_name]
    if not chosen:
        seen = ", ".join(sorted({k.name for k in profile.kernels}))
        raise click.ClickException(f"no kernel matches {name!r}; the report holds: {seen}")
    return chosen


def _emit(results: list[tuple[KernelProfile, Diagnosis]], profile: Profile, fmt: str) -> None:
    if fmt == "json":
        emit_json({"report": profile.report, "reader": profile.reader,
                   "collection": profile.collection,
                   "kernels": [{"index": k.index, "name": k.name, "mangled": k.mangled,
                                **d.to_json()} for k, d in results]})
        return
    render = explain_markdown if fmt == "md" else explain_text
    parts = [render(d, k) for k, d in results]
    sep = "\n\n" + ("---\n\n" if fmt == "md" else "=" * 78 + "\n\n")
    click.echo(sep.join(parts))
