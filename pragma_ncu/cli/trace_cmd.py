"""`pragma-ncu trace RUN`: the reasoning trace of a `tune` run, as Markdown, JSON or HTML."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click
from tabulate import tabulate

from pragma_ncu.cli.common import CommandError, user_errors
from pragma_ncu.errors import ExitStatus
from pragma_ncu.report.trace import (
    load_trace,
    render_html,
    render_markdown,
    runs_table,
    trace_json,
)
from pragma_ncu.store import DEFAULT_NAME, Store


@click.command("trace")
@click.argument("run", required=False)
@click.option("--store", "store_path", type=click.Path(path_type=Path, dir_okay=False),
              default=Path(DEFAULT_NAME), show_default=True, help="The run store to read.")
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
    # Store.open would create a missing file; reading a trace must not.
    if not store_path.is_file():
        raise CommandError(f"no run store at {store_path}; `pragma-ncu tune` creates it, or "
                           "point --store at one", ExitStatus.INPUT)
    with user_errors(), Store.open(store_path) as store:
        text = _list_text(store, fmt) if list_runs else _trace_text(store, run or "", fmt)
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    click.echo(f"wrote the {fmt} trace to {output}", err=True)


def _trace_text(store: Store, run: str, fmt: str) -> str:
    trace = load_trace(store, run)
    if fmt == "json":
        return json.dumps(trace_json(trace), indent=2, default=str) + "\n"
    return render_html(trace) if fmt == "html" else render_markdown(trace)


def _list_text(store: Store, fmt: str) -> str:
    if fmt == "json":
        return json.dumps([asdict(r) for r in store.runs()], indent=2, default=str) + "\n"
    table = runs_table(store)
    if not table.rows:
        return f"no runs in {store.path}\n"
    return tabulate(table.rows, table.headers, disable_numparse=True) + "\n"
