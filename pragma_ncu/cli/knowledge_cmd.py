"""`pragma-ncu knowledge`: browse the metric compendium (show one metric, search by words)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click
from tabulate import tabulate

from pragma_ncu.cli.common import CommandError, click_error, emit_json
from pragma_ncu.errors import ExitStatus, PragmaError
from pragma_ncu.knowledge import compendium
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.knowledge.docs import render_entry
from pragma_ncu.knowledge.schema import MetricEntry, Strategy
from pragma_ncu.settings import load_settings

FORMATS = click.Choice(["table", "json", "md"])


def load_compendium() -> Compendium:
    """The compendium this machine's settings name, with a bad file a user-facing error."""
    try:
        return compendium.load_compendium(load_settings())
    except PragmaError as exc:
        raise click_error(exc) from None


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
    comp = load_compendium()
    entry = comp.lookup(metric)
    if entry is None:
        close = comp.suggest(metric)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise CommandError(f"no compendium entry for {metric!r}{hint}. "
                           "Try `pragma-ncu knowledge search WORDS`.", ExitStatus.INPUT)
    strategies = _strategies(comp, entry)
    if fmt == "json":
        emit_json({"query": metric, "entry": entry.to_json(),
                   "strategies": [asdict(s) for s in strategies]})
    elif fmt == "md":
        click.echo(render_entry(entry, strategies), nl=False)
    else:
        _print_entry(metric, entry, strategies)


@knowledge.command()
@click.argument("words", nargs=-1, required=True)
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True,
              help="Show at most this many entries.")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
def search(words: tuple[str, ...], limit: int, fmt: str) -> None:
    """Find entries by WORDS in names, titles and explanations (best matches first)."""
    found = load_compendium().search(" ".join(words), limit=limit)
    if fmt == "json":
        emit_json([_search_row(e) for e in found])
        return
    if not found:
        click.echo(f"no entry matches {' '.join(words)!r}", err=True)
        return
    rows = [[e.name + ("*" if e.family else ""), e.profiler, e.title, ", ".join(e.indicates)]
            for e in found]
    tablefmt = "github" if fmt == "md" else "simple"
    click.echo(tabulate(rows, headers=["name", "profiler", "title", "indicates"],
                        tablefmt=tablefmt, disable_numparse=True))


def _strategies(comp: Compendium, entry: MetricEntry) -> list[Strategy]:
    out: list[Strategy] = []
    for bottleneck in entry.indicates:
        out.extend(s for s in comp.strategies_for(bottleneck) if s not in out)
    return out


def _search_row(entry: MetricEntry) -> dict[str, Any]:
    return {"name": entry.name, "profiler": entry.profiler, "title": entry.title,
            "indicates": list(entry.indicates), "family": entry.family, "origin": entry.origin}


def _print_entry(query: str, entry: MetricEntry, strategies: list[Strategy]) -> None:
    if entry.name != query:
        kind = "family" if entry.family else "entry"
        click.echo(f"{query} -> {kind} {entry.name}\n")
    rows = [
        ("name", entry.name + (" (family: prefix of metric names)" if entry.family else "")),
        ("title", entry.title),
        ("profiler", f"{entry.profiler} ({entry.group}, {entry.origin})"),
        ("unit", entry.unit or "-"),
        ("measured by", entry.hardware_unit),
        ("meaning", entry.meaning),
        ("reading", entry.reading),
        ("indicates", ", ".join(entry.indicates) or "-"),
        ("hints", "\n".join(f"- {h}" for h in entry.hints) or "-"),
        ("related", ", ".join(entry.related) or "-"),
        ("aliases", ", ".join(entry.aliases) or "-"),
        ("sources", "\n".join(entry.sources)),
    ]
    click.echo(tabulate(rows, tablefmt="plain", maxcolwidths=[None, 88], disable_numparse=True))
    for s in strategies:
        click.echo(f"\nstrategy for {s.bottleneck}: {s.evidence}")
        for i, action in enumerate(s.actions, 1):
            click.echo(f"  {i}. {action}")
        if s.knobs:
            click.echo(f"  knobs: {', '.join(s.knobs)}")
