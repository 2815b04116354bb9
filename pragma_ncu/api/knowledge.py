"""`knowledge` as library calls: the metric compendium (an entry and its strategies, a search
by words) and `knowledge build`, which writes the compendium from the profilers' own
documentation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pragma_ncu.api.arguments import checked
from pragma_ncu.api.common import settings_or_default
from pragma_ncu.infra.bounds import Count, Jobs
from pragma_ncu.infra.errors import InputError, LLMUnavailable, ToolchainError
from pragma_ncu.infra.llm import LLMClient, LLMConfig
from pragma_ncu.infra.progress import Progress, logged, notes
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import find_ncu
from pragma_ncu.knowledge import compendium as compendia
from pragma_ncu.knowledge.adapters import select_adapters
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.knowledge.pipeline import BuildSummary, SourcePlan, build_compendium
from pragma_ncu.knowledge.schema import MetricEntry, Strategy
from pragma_ncu.knowledge.sources import CrawlContext
from pragma_ncu.knowledge.summarize import LLMSummarizer, RuleSummarizer, Summarizer


@checked
def compendium(*, settings: Settings | None = None) -> Compendium:
    """The compendium this machine's settings name (the shipped one unless rebuilt)."""
    return compendia.load_compendium(settings_or_default(settings))


@dataclass(frozen=True)
class KnowledgeEntry:
    """What `knowledge show` found for a query: its entry (a metric, or the family whose
    prefix it is) and the strategies for the bottlenecks it points to."""

    query: str
    entry: MetricEntry
    strategies: tuple[Strategy, ...]


@checked
def knowledge(metric: str, *, settings: Settings | None = None) -> KnowledgeEntry:
    """What `metric` means, how to read it, what it points to and what to do about it; an
    InputError naming the closest entries for a metric the compendium does not know."""
    found = compendium(settings=settings)
    entry = found.lookup(metric)
    if entry is None:
        close = found.suggest(metric)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise InputError(f"no compendium entry for {metric!r}{hint}. "
                         "Try `pragma-ncu knowledge search WORDS`.")
    strategies: list[Strategy] = []
    for bottleneck in entry.indicates:
        strategies.extend(s for s in found.strategies_for(bottleneck) if s not in strategies)
    return KnowledgeEntry(metric, entry, tuple(strategies))


@checked
def knowledge_search(words: str, *, limit: Count = 10,
                     settings: Settings | None = None) -> tuple[MetricEntry, ...]:
    """The entries whose names, titles and explanations match `words`, best first."""
    return tuple(compendium(settings=settings).search(words, limit=limit))


@dataclass(frozen=True)
class KnowledgeBuild:
    """What `knowledge build` did, and in words how it summarized (which LLM, or the rules
    and why)."""

    summary: BuildSummary
    summarized_by: str


@checked
def knowledge_build(*, chip: str = "gh100", online: bool = False, llm: bool = True,
                    sources: Sequence[str] = (), ncu_docs: Path | None = None,
                    sections: Path | None = None, jobs: Jobs = 4,
                    settings: Settings | None = None,
                    progress: Progress | None = None) -> KnowledgeBuild:
    """Build the metric compendium from the profilers' own documentation: Nsight Compute's
    manuals (`ncu_docs`, default beside the ncu found), `ncu --query-metrics --chip chip`,
    its section files and rule scripts (`sections`), `perf list` and perf's man pages, web
    pages only when `online`; `sources` keeps those adapters only (adapter_names()). Each
    piece is summarized by the configured LLM (unless `llm` is False) or by rules, `jobs`
    requests at once; the work is cached, so a rerun redoes only what changed."""
    settings = settings_or_default(settings)
    adapters = select_adapters(tuple(sources))  # an unknown name fails before any work
    say = notes(logged(progress))
    context, note = crawl_context(settings, chip, online, ncu_docs, sections)
    summarizer, how = make_summarizer(settings, llm)
    say(note)
    say(f"summaries by {how}")
    summary = build_compendium(settings, SourcePlan(adapters, context),
                               summarizer, say, jobs=jobs)
    return KnowledgeBuild(summary, how)


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


def make_summarizer(settings: Settings, llm: bool) -> tuple[Summarizer, str]:
    """The LLM summarizer when one is configured and wanted, else the rules; and in words."""
    if not llm:
        return RuleSummarizer(), "rules (--no-llm)"
    config = LLMConfig.from_settings(settings)
    if config is None:
        return RuleSummarizer(), ("rules (no LLM configured: set PRAGMA_NCU_LLM_MODEL and "
                                  "PRAGMA_NCU_LLM_BASE_URL or PRAGMA_NCU_LLM_API_KEY)")
    try:
        return LLMSummarizer(LLMClient(config)), f"LLM {config.label}"
    except LLMUnavailable as exc:
        return RuleSummarizer(), f"rules ({exc})"
