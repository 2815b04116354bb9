"""What `knowledge` prints: one entry with its strategies, a search's matches, and what
`knowledge build` did (Markdown for an entry is knowledge.docs.render_entry's)."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from pragma_ncu.knowledge.pipeline import BuildSummary
from pragma_ncu.knowledge.schema import MetricEntry, Strategy


def entry_lines(query: str, entry: MetricEntry, strategies: Sequence[Strategy]) -> list[str]:
    """The entry as a two-column table, then each strategy with its actions and knobs."""
    lines = []
    if entry.name != query:
        kind = "family" if entry.family else "entry"
        lines.append(f"{query} -> {kind} {entry.name}\n")
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
    lines.append(tabulate(rows, tablefmt="plain", maxcolwidths=[None, 88],
                          disable_numparse=True))
    for s in strategies:
        lines.append(f"\nstrategy for {s.bottleneck}: {s.evidence}")
        lines += [f"  {i}. {action}" for i, action in enumerate(s.actions, 1)]
        if s.knobs:
            lines.append(f"  knobs: {', '.join(s.knobs)}")
    return lines


def search_table(found: Sequence[MetricEntry], markdown: bool = False) -> str:
    """The matches, one row each (a family's name starred)."""
    rows = [[e.name + ("*" if e.family else ""), e.profiler, e.title, ", ".join(e.indicates)]
            for e in found]
    return tabulate(rows, headers=["name", "profiler", "title", "indicates"],
                    tablefmt="github" if markdown else "simple", disable_numparse=True)


def build_lines(summary: BuildSummary, how: str) -> list[str]:
    """Each source's outcome, then the counts of each stage, where it wrote and how long."""
    rows = [[r.name, r.status, r.documents, r.parsed, r.segments, r.note]
            for r in summary.sources]
    lines = [tabulate(rows, headers=["source", "status", "docs", "parsed", "segments", "note"],
                      disable_numparse=True), "",
             f"segments:   {summary.segments} distinct",
             f"summaries:  {summary.summarized_new} new, {summary.summarized_cached} cached; "
             f"{summary.llm} by LLM, {summary.rules} by rules, {summary.fallback} fallback "
             f"({how}" + (f", {summary.llm_tokens} tokens" if summary.llm_tokens else "") + ")",
             f"compendium: {summary.entries} entries ({summary.metrics} metrics, "
             f"{summary.families} families)"]
    if summary.compendium is not None:
        lines += [f"written:    {summary.compendium}", f"            {summary.metric_docs}/"]
    lines.append("time:       " + ", ".join(f"{stage} {seconds:.1f} s"
                                          for stage, seconds in summary.stage_seconds))
    lines += [f"warning: {warning}" for warning in summary.warnings[:20]]
    if len(summary.warnings) > 20:
        lines.append(f"warning: ... and {len(summary.warnings) - 20} more")
    return lines
