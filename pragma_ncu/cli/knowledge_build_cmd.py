"""`pragma-ncu knowledge build`: the profilers' documentation → the generated compendium."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from tabulate import tabulate

from pragma_ncu.cli.common import click_error, emit_json
from pragma_ncu.cli.display import progress_display
from pragma_ncu.errors import ExitStatus, LLMUnavailable, PragmaError, ToolchainError
from pragma_ncu.knowledge.adapters import adapter_names, select_adapters
from pragma_ncu.knowledge.pipeline import BuildSummary, SourcePlan, build_compendium
from pragma_ncu.knowledge.sources import CrawlContext
from pragma_ncu.knowledge.summarize import LLMSummarizer, RuleSummarizer, Summarizer
from pragma_ncu.llm import LLMClient, LLMConfig
from pragma_ncu.progress import notes
from pragma_ncu.settings import Settings, load_settings
from pragma_ncu.toolchain import find_ncu


@click.command("build")
@click.option("--chip", default="gh100", show_default=True,
              help="Chip whose metrics `ncu --query-metrics --chip` lists (needs no GPU).")
@click.option("--online", is_flag=True,
              help="Also fetch web pages (docs.nvidia.com, the perf wiki); off by default.")
@click.option("--no-llm", is_flag=True,
              help="Summarize with the deterministic rules even when an LLM is configured.")
@click.option("--source", "source_names", multiple=True, type=click.Choice(adapter_names()),
              help="Crawl only this source (repeatable); the compendium then holds only these.")
@click.option("--ncu-docs", type=click.Path(path_type=Path, file_okay=False),
              help="Nsight Compute's docs/ folder, when not beside the ncu found.")
@click.option("--sections", type=click.Path(path_type=Path, file_okay=False),
              help="Nsight Compute's sections/ folder (.section files and rule scripts).")
@click.option("--jobs", type=click.IntRange(1, 64), default=4, show_default=True,
              help="LLM requests in flight at once.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def build(chip: str, online: bool, no_llm: bool, source_names: tuple[str, ...],
          ncu_docs: Path | None, sections: Path | None, jobs: int, fmt: str) -> None:
    """Build the metric compendium from the profilers' own documentation.

    Reads Nsight Compute's manuals, `ncu --query-metrics`, its section files and rule scripts,
    and `perf list` and perf's man pages where present (web pages only with --online);
    summarizes every piece with the configured LLM (PRAGMA_NCU_LLM_MODEL, ..._BASE_URL,
    ..._API_KEY) or with deterministic rules; and writes compendium.json and Markdown metric
    documents under the data folder. Work is cached: a rerun redoes only what changed.
    Progress goes to stderr. Exit status 3 when no source could be read (no ncu install, no
    perf, nothing online).
    """
    settings = load_settings()
    context, ncu_note = crawl_context(settings, chip, online, ncu_docs, sections)
    summarizer, how = make_summarizer(settings, no_llm)
    try:
        with progress_display(True) as display:
            show = notes(display)
            show(ncu_note)
            show(f"summaries by {how}")
            summary = build_compendium(settings, SourcePlan(select_adapters(source_names),
                                                            context), summarizer, show, jobs=jobs)
    except PragmaError as exc:
        raise click_error(exc) from None
    if fmt == "json":
        emit_json(summary.to_json())
    else:
        _print_summary(summary, how)
    sys.exit(ExitStatus.OK if summary.compendium is not None else ExitStatus.ENVIRONMENT)


def crawl_context(settings: Settings, chip: str, online: bool, ncu_docs: Path | None,
                  sections: Path | None) -> tuple[CrawlContext, str]:
    """Where the sources are: the ncu of the settings and its install, or the overrides."""
    install, note = None, "ncu: not found (PRAGMA_NCU_NCU or PATH)"
    if settings.ncu:
        try:
            info = find_ncu(settings)
            install = info.install_dir
            note = f"ncu {info.version} at {info.path}, install {install or 'not found'}"
        except ToolchainError as exc:
            note = f"ncu: {exc}"
    context = CrawlContext(
        ncu=settings.ncu, chip=chip, online=online,
        ncu_docs=ncu_docs or (install / "docs" if install else None),
        ncu_sections=sections or (install / "sections" if install else None))
    return context, note


def make_summarizer(settings: Settings, no_llm: bool) -> tuple[Summarizer, str]:
    """The LLM summarizer when one is configured and wanted, else the rules; and in words."""
    if no_llm:
        return RuleSummarizer(), "rules (--no-llm)"
    config = LLMConfig.from_settings(settings)
    if config is None:
        return RuleSummarizer(), ("rules (no LLM configured: set PRAGMA_NCU_LLM_MODEL and "
                                  "PRAGMA_NCU_LLM_BASE_URL or PRAGMA_NCU_LLM_API_KEY)")
    try:
        return LLMSummarizer(LLMClient(config)), f"LLM {config.label}"
    except LLMUnavailable as exc:
        return RuleSummarizer(), f"rules ({exc})"


def _print_summary(summary: BuildSummary, how: str) -> None:
    rows = [[r.name, r.status, r.documents, r.parsed, r.segments, r.note]
            for r in summary.sources]
    click.echo(tabulate(rows, headers=["source", "status", "docs", "parsed", "segments", "note"],
                        disable_numparse=True))
    click.echo("")
    click.echo(f"segments:   {summary.segments} distinct")
    click.echo(f"summaries:  {summary.summarized_new} new, {summary.summarized_cached} cached; "
               f"{summary.llm} by LLM, {summary.rules} by rules, {summary.fallback} fallback "
               f"({how}" + (f", {summary.llm_tokens} tokens" if summary.llm_tokens else "") + ")")
    click.echo(f"compendium: {summary.entries} entries ({summary.metrics} metrics, "
               f"{summary.families} families)")
    if summary.compendium is not None:
        click.echo(f"written:    {summary.compendium}")
        click.echo(f"            {summary.metric_docs}/")
    click.echo("time:       " + ", ".join(f"{stage} {seconds:.1f} s"
                                          for stage, seconds in summary.stage_seconds))
    for warning in summary.warnings[:20]:
        click.echo(f"warning: {warning}")
    if len(summary.warnings) > 20:
        click.echo(f"warning: ... and {len(summary.warnings) - 20} more")
