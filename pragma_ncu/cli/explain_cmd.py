"""`pragma-ncu explain`: what limits a kernel, from a report, a profile or a .cu file."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.cli.common import emit_json, progress_printer, user_errors
from pragma_ncu.cli.profile_cmd import profile_options, profile_request
from pragma_ncu.report.diagnosis import explain_markdown, explain_text


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
    options = profile_request(params, arch, metrics, sections, source, out, timeout)
    show = progress_printer(fmt == "table" and sys.stderr.isatty())
    with user_errors():
        found = api.explain(target, kernel=kernel_name, reader=reader, ceiling_gbps=ceiling_gbps,
                            spec=spec, shape=shape, options=options, progress=show)
    _emit(found, fmt)


def _emit(found: api.Explanation, fmt: str) -> None:
    profile = found.profile
    if fmt == "json":
        emit_json({"report": profile.report, "reader": profile.reader,
                   "collection": profile.collection,
                   "kernels": [{"index": k.index, "name": k.name, "mangled": k.mangled,
                                **d.to_json()} for k, d in found.kernels]})
        return
    render = explain_markdown if fmt == "md" else explain_text
    parts = [render(d, k) for k, d in found.kernels]
    sep = "\n\n" + ("---\n\n" if fmt == "md" else "=" * 78 + "\n\n")
    click.echo(sep.join(parts))
