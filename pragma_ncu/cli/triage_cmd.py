"""`pragma-ncu triage BASE NEW`: which kernels got slower between two versions, and why; one
screen for an application of thousands of launches, Markdown for a pull request, JSON and JUnit
XML for CI.

Exit status: 0 no regression, 1 a regression beyond --threshold, 2 a usage or input error
(missing or unreadable side, no kernel in common), 3 the environment (a kernel side needs a GPU
and ncu), so CI pipelines can gate on it; with --format junit an error is an XML document too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.api import bounds
from pragma_ncu.cli.common import Number, bounded, emit_json, parse_params, user_errors
from pragma_ncu.cli.display import output_width, progress_display
from pragma_ncu.infra.errors import exit_status
from pragma_ncu.report.junit import error_junit, report_junit
from pragma_ncu.report.triage import report_markdown, report_text
from pragma_ncu.report.triage_overview import DEFAULT_TOP, overview_markdown, overview_text


@click.command("triage")
@click.argument("base", metavar="BASE")
@click.argument("new", metavar="NEW")
@click.option("--threshold", type=Number(min=0, max=api.MAX_THRESHOLD_PCT),
              default=api.DEFAULT_THRESHOLD_PCT,
              show_default=True, help="Slowdown in percent that counts as a regression.")
@click.option("--format", "fmt", type=click.Choice(["text", "md", "json", "junit"]),
              default="text", show_default=True,
              help="md: a pull-request comment; junit: JUnit XML, one test case per kernel.")
@click.option("--top", type=bounded(bounds.COUNT), default=DEFAULT_TOP, show_default=True,
              help="Rows for the changed kernel groups that lost or saved the most time.")
@click.option("--all", "show_all", is_flag=True, help="A row for every kernel group, the "
              "unchanged ones too.")
@click.option("--kernel", "kernel_name", help="Drill into this kernel (name or part of its "
              "signature): the full detail of each of its groups; or pair two differently "
              "named kernels as OLD=NEW.")
@click.option("--match", "match_by", type=click.Choice(["name", "order"]), default="name",
              show_default=True, help="Pair kernel groups by name (then launch configuration, "
              "then template arguments) or by order of first launch only.")
@click.option("--reader", type=click.Choice(["auto", "ncu_report", "csv"]), default="auto",
              show_default=True, help="How to read a .ncu-rep.")
@click.option("--spec", type=click.Path(path_type=Path),
              help="The spec of .cu sides (default: the .toml beside each .cu).")
@click.option("--shape", help="For .cu/.toml sides: a shape name, or dims as T=4096,d=11008 "
              "(default: the spec's first shape).")
@click.option("--param", "params", multiple=True, help="For .cu/.toml sides: NAME=VALUE.")
@click.option("--arch", help="For .cu/.toml sides: compile for this arch (default: the GPU's).")
@click.option("--repeat", type=bounded(bounds.REPEATS), default=3, show_default=True,
              help="For .cu/.toml sides: timing runs after the profiled one.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("pragma-ncu-triage"),
              show_default=True, help="For .cu/.toml sides: where profiles and timings go.")
@click.option("--timeout", type=bounded(bounds.SECONDS), default=180.0, show_default=True,
              help="For .cu/.toml sides: seconds a worker or ncu run may take.")
@click.option("--store", "store_path", type=click.Path(path_type=Path, dir_okay=False),
              default=Path(api.DEFAULT_STORE), show_default=True,
              help="For run:ID sides: the run store of `pragma-ncu tune`.")
def triage_command(base: str, new: str, threshold: float, fmt: str, top: int,
                   show_all: bool, kernel_name: str | None, match_by: str, reader: str,
                   spec: Path | None, shape: str | None, params: tuple[str, ...],
                   arch: str | None, repeat: int, out: Path, timeout: float,
                   store_path: Path) -> None:
    """Compare BASE with NEW kernel by kernel: what the application lost, and why.

    Launches are grouped by kernel (full name with template arguments, and launch
    configuration); each group's launches on both sides are its timing sample. Each side is
    a .ncu-rep, a profile .json(.gz), a folder of ncu CSV pages (raw.csv, details.csv,
    source.csv; a timing.json beside them adds repeated timings), run:ID (or run:last) for
    the historical best of a `tune` run (the profile the loop took of it), or a kernel: a .cu
    file with its spec (or a .toml spec), profiled and timed now. Exit status: 0 no
    regression, 1 a regression beyond --threshold, 2 bad input, 3 the environment (no ncu
    for a .ncu-rep, no GPU for a kernel side). With --format junit, a triage that cannot
    be made is an XML document too, one test case with an <error> saying why.
    """
    try:
        with user_errors(), progress_display(fmt == "text" and sys.stderr.isatty()) as show:
            report = api.triage(base, new, threshold=threshold, kernel=kernel_name,
                                by_order=match_by == "order", reader=reader, spec=spec,
                                shape=shape, params=parse_params(params), arch=arch,
                                repeats=repeat, out=out, timeout=timeout, store=store_path,
                                progress=show)
    except Exception as exc:
        if fmt == "junit":  # CI reads the XML: say there why the gate could not run
            click.echo(error_junit(base, new, *_failure(exc)), nl=False)
        raise
    _emit(report, fmt, top, show_all, drill=bool(kernel_name))
    sys.exit(report.exit_code)


def _failure(exc: Exception) -> tuple[str, int]:
    """An error's message and the exit status it ends with (the group decides the status of
    anything but click's own errors, by errors.exit_status)."""
    if isinstance(exc, click.ClickException):
        return exc.format_message(), exc.exit_code
    return f"{type(exc).__name__}: {exc}", exit_status(exc)


def _emit(report: api.TriageReport, fmt: str, top: int, show_all: bool, drill: bool) -> None:
    """The overview, or with --kernel the full detail of the kernel's groups."""
    if fmt == "json":
        emit_json(report.to_json())
    elif fmt == "junit":
        click.echo(report_junit(report), nl=False)
    elif fmt == "md":
        click.echo(report_markdown(report) if drill else
                   overview_markdown(report, top, show_all), nl=False)
    else:
        width = output_width()
        click.echo(report_text(report, width) if drill else
                   overview_text(report, top, show_all, width))
