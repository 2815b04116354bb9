"""`pragma-ncu explain`: what limits a kernel, from a report, a profile or a .cu file."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.api import bounds
from pragma_ncu.api.application import Application
from pragma_ncu.cli.common import bounded, emit_json, user_errors
from pragma_ncu.cli.display import output_width, progress_display
from pragma_ncu.cli.profile_cmd import profile_options, profile_request
from pragma_ncu.report.application import (
    DEFAULT_TOP,
    groups_text,
    overview_markdown,
    overview_text,
    to_json,
)
from pragma_ncu.report.diagnosis import explain_markdown, explain_text


@click.command()
@click.argument("target", type=click.Path(path_type=Path))
@click.option("--kernel", "kernel_name", help="Explain only this kernel (name or part of it).")
@click.option("--reader", type=click.Choice(["auto", "ncu_report", "csv"]), default="auto",
              show_default=True, help="How to read a .ncu-rep.")
@click.option("--ceiling-gbps", type=bounded(bounds.POSITIVE),
              help="Memory ceiling for the roofline (default: the measured copy ceiling the "
              "profile recorded, else one this machine measured on the same GPU model, else a "
              "copy's practical 85% of ncu's DRAM peak).")
@click.option("--all", "show_all", is_flag=True,
              help="Application report: a row for every kernel group.")
@click.option("--top", type=bounded(bounds.COUNT),
              help="Application report: rows for the kernel groups that would save the most "
              f"(default: {DEFAULT_TOP}, fewer where their lines would not fit one screen).")
@click.option("--source-dir", "sources", multiple=True, type=click.Path(path_type=Path),
              help="Application report: where its CUDA sources are (a file, or a folder "
              "searched recursively; repeatable). A group whose kernel is defined there gets the "
              "init/tune commands. Default: the .cu files beside the report.")
@profile_options
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json"]), default="table",
              show_default=True)
def explain(target: Path, kernel_name: str | None, reader: str, ceiling_gbps: float | None,
            show_all: bool, top: int | None, sources: tuple[Path, ...], spec: Path | None,
            spec_kernel: str | None, shape: str | None, params: tuple[str, ...], arch: str | None,
            metrics: tuple[str, ...], sections: tuple[str, ...], source: bool, out: Path | None,
            timeout: float, fmt: str) -> None:
    """Explain what limits each kernel in TARGET, ranked by evidence.

    TARGET is a .ncu-rep (any program's, one or many kernels), a profile.json written by
    `profile`, a folder of `ncu --csv` exports (raw.csv, details.csv, source.csv), or a .cu
    file with its spec (profiled first, with the --shape/--param/... options). A C/C++ file
    (.c, .cpp) is verified, timed and profiled on the CPU with perf, or with cachegrind where
    the CPU's counters cannot be read; its verdict names the dominant top-down category, or
    the dominant simulated miss or mispredict cause.

    A report of many launches is an application: its launches are grouped by kernel (full
    name with template arguments, and launch configuration), and one screen ranks the groups
    by what reaching their attainable roofline would save (GPU time x headroom), with the
    application's time if each did; --kernel NAME shows a group's full detail.
    """
    options = profile_request(params, arch, metrics, sections, source, out, timeout)
    with user_errors(), progress_display(fmt == "table" and sys.stderr.isatty()) as show:
        found = api.explain(target, kernel=kernel_name, reader=reader, ceiling_gbps=ceiling_gbps,
                            spec=spec, shape=shape, options=options, progress=show,
                            sources=sources, kernel_name=spec_kernel)
    if found.application is not None:
        _emit_application(found, found.application, fmt, kernel_name is not None, show_all,
                          top)
    else:
        _emit(found, fmt)


def _emit_application(found: api.Explanation, app: Application, fmt: str, detail: bool,
                      show_all: bool, top: int | None) -> None:
    """The one screen, or each chosen group's full detail (--kernel, or a single group)."""
    profile = found.profile
    if fmt == "json":
        emit_json({"report": profile.report, "reader": profile.reader,
                   "collection": profile.collection, "application": to_json(app)})
    elif detail or app.group_count == 1:
        click.echo(groups_text(app, markdown=fmt == "md", width=output_width()))
    elif fmt == "md":
        click.echo(overview_markdown(app, profile, top, show_all), nl=False)
    else:
        click.echo(overview_text(app, profile, top, show_all, output_width()))


def _emit(found: api.Explanation, fmt: str) -> None:
    profile = found.profile
    if fmt == "json":
        emit_json({"report": profile.report, "reader": profile.reader,
                   "collection": profile.collection,
                   "kernels": [{"index": k.index, "name": k.name, "mangled": k.mangled,
                                **d.to_json()} for k, d in found.kernels]})
        return
    width = output_width()
    parts = [explain_markdown(d, k) if fmt == "md" else explain_text(d, k, width)
             for k, d in found.kernels]
    sep = "\n\n" + ("---\n\n" if fmt == "md" else "=" * 78 + "\n\n")
    click.echo(sep.join(parts))
