"""`pragma-ncu knowledge`: browse the metric compendium (show one metric, search by words)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from pragma_ncu import api
from pragma_ncu.api import bounds
from pragma_ncu.cli.common import bounded, emit_json, user_errors
from pragma_ncu.report.knowledge import entry_lines, search_table

FORMATS = click.Choice(["table", "json", "md"])


@click.group()
def knowledge() -> None:
    """Look up what a profiler metric means and what to do about it.

    The compendium covers Nsight Compute metrics (with their rollup suffixes, e.g.
    dram__throughput.avg.pct_of_peak_sustained_elapsed) and Linux perf events.
    """


@knowledge.command()
@click.argument("metric")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
def show(metric: str, fmt: str) -> None:
    """Explain METRIC: meaning, how to read it, what it points to, and the strategies."""
    with user_errors():
        found = api.knowledge(metric)
    if fmt == "json":
        emit_json({"query": metric, "entry": found.entry.to_json(),
                   "strategies": [asdict(s) for s in found.strategies]})
    elif fmt == "md":
        click.echo(api.render_entry(found.entry, list(found.strategies)), nl=False)
    else:
        click.echo("\n".join(entry_lines(metric, found.entry, found.strategies)))


@knowledge.command()
@click.argument("words", nargs=-1, required=True)
@click.option("--limit", type=bounded(bounds.COUNT), default=10, show_default=True,
              help="Show at most this many entries.")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
def search(words: tuple[str, ...], limit: int, fmt: str) -> None:
    """Find entries by WORDS in names, titles and explanations (best matches first)."""
    with user_errors():
        found = api.knowledge_search(" ".join(words), limit=limit)
    if fmt == "json":
        emit_json([_search_row(e) for e in found])
        return
    if not found:
        click.echo(f"no entry matches {' '.join(words)!r}", err=True)
        return
    click.echo(search_table(found, markdown=fmt == "md"))


def _search_row(entry: api.MetricEntry) -> dict[str, Any]:
    return {"name": entry.name, "profiler": entry.profiler, "title": entry.title,
            "indicates": list(entry.indicates), "family": entry.family, "origin": entry.origin}
