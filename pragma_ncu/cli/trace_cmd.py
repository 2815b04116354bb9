"""`pragma-ncu trace RUN`: the reasoning trace of a `tune` run, as Markdown, JSON or HTML."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from pragma_ncu import api
from pragma_ncu.cli.common import user_errors
from pragma_ncu.report.runs import runs_text
from pragma_ncu.report.trace import render_html, render_markdown, trace_json


@click.command("trace")
@click.argument("run", required=False)
@click.option("--store", "store_path", type=click.Path(path_type=Path, dir_okay=False),
              default=Path(api.DEFAULT_STORE), show_default=True, help="The run store to read.")
@click.option("--format", "fmt", type=click.Choice(["md", "json", "html"]), default="md",
              show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the trace to this file instead of standard output.")
@click.option("--list", "list_runs", is_flag=True, help="List the runs in the store.")
def trace_command(run: str | None, store_path: Path, fmt: str, output: Path | None,
                  list_runs: bool) -> None:
    """Show every decision of tune run RUN with the metrics that justified it.

    RUN is a run id, a unique prefix of one, or "latest". The HTML page is self-contained
    (charts included) and opens from disk; write it with -o.
    """
    if not list_runs and not run:
        raise click.UsageError("give a RUN id (a prefix, or 'latest'), or --list")
    with user_errors():
        text = _list_text(store_path, fmt) if list_runs else _trace_text(store_path, run or "",
                                                                         fmt)
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    click.echo(f"wrote the {fmt} trace to {output}", err=True)


def _trace_text(store: Path, run: str, fmt: str) -> str:
    trace = api.trace(run, store=store)
    if fmt == "json":
        return json.dumps(trace_json(trace), indent=2, default=str) + "\n"
    return render_html(trace) if fmt == "html" else render_markdown(trace)


def _list_text(store: Path, fmt: str) -> str:
    found = api.runs(store=store)
    if fmt == "json":
        return json.dumps([asdict(e.run) for e in found], indent=2, default=str) + "\n"
    return runs_text(found, str(store))
