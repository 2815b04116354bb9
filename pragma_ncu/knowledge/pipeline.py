"""`knowledge build`: crawl → summarize → synthesize, staged, cached and resumable.

    summary = build_compendium(settings, SourcePlan(select_adapters(), ctx), RuleSummarizer())

1. crawl: each adapter gathers its documents and cuts them into Segments; parsing is cached by
   the document's content, so unchanged documents are not parsed again.
2. summarize: every distinct segment (by content hash) gets a SegmentSummary, from the cache
   when the same summarizer already did it, else anew; each new one is written to the cache the
   moment it exists, so an interrupted build loses nothing it finished.
3. synthesize: all summaries become MetricEntry values, written to
   <data_dir>/knowledge/compendium.json and <data_dir>/knowledge/metric_docs/*.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pragma_ncu.infra.errors import PragmaError
from pragma_ncu.infra.progress import Notice
from pragma_ncu.infra.settings import Settings
from pragma_ncu.knowledge.cache import JsonCache, write_json_atomic
from pragma_ncu.knowledge.compendium import generated_compendium_path
from pragma_ncu.knowledge.publish import write_compendium, write_metric_docs
from pragma_ncu.knowledge.segments import Segment, SegmentSummary, digest
from pragma_ncu.knowledge.sources import CrawlContext, SourceAdapter
from pragma_ncu.knowledge.summarize import RuleSummarizer, Summarizer
from pragma_ncu.knowledge.synthesize import synthesize

BREAKER_LIMIT = 5  # consecutive "LLM unavailable" fallbacks before the rest go to the rules


def knowledge_dir(settings: Settings) -> Path:
    """Where the build writes: <data_dir>/knowledge."""
    return settings.data_dir / "knowledge"


@dataclass(frozen=True)
class SourcePlan:
    """Which adapters to run, and what they may read."""

    adapters: tuple[SourceAdapter, ...]
    context: CrawlContext = field(default_factory=CrawlContext)


@dataclass(frozen=True)
class SourceReport:
    """What one source gave: status "ok", "skipped" (not on this machine) or "failed"."""

    name: str
    profiler: str
    status: str
    documents: int = 0
    parsed: int = 0  # documents parsed in this build (the rest came from the cache)
    segments: int = 0
    note: str = ""


@dataclass(frozen=True)
class BuildSummary:
    """The outcome of one build: counts per stage, time per stage, where the output went."""

    sources: tuple[SourceReport, ...]
    segments: int  # distinct segments (by content)
    summarized_new: int
    summarized_cached: int
    llm: int  # summaries written by the LLM (new or cached)
    rules: int  # summaries written by the rules
    fallback: int  # new summaries where the rules stood in for a failed LLM answer
    llm_tokens: int  # spent in this build
    metrics: int
    families: int
    entries: int
    stage_seconds: tuple[tuple[str, float], ...]
    compendium: Path | None  # None when nothing was crawled (an older file is left alone)
    metric_docs: Path | None
    summarizer: str
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["compendium"] = str(self.compendium) if self.compendium else None
        data["metric_docs"] = str(self.metric_docs) if self.metric_docs else None
        data["stage_seconds"] = {stage: round(s, 3) for stage, s in self.stage_seconds}
        return data


@dataclass
class _Counts:
    """Tallies of the summarize stage (mutable while the stage runs, then frozen into the
    BuildSummary)."""

    new: int = 0
    cached: int = 0
    llm: int = 0
    rules: int = 0
    fallback: int = 0
    tokens: int = 0
    unavailable_in_a_row: int = 0
    warnings: list[str] = field(default_factory=list)

    def add(self, summary: SegmentSummary, new: bool) -> None:
        self.new += new
        self.cached += not new
        self.llm += summary.method == "llm"
        self.rules += summary.method != "llm"
        self.fallback += new and summary.fell_back
        self.tokens += summary.tokens if new else 0
        unavailable = summary.fallback_reason.startswith("unavailable")
        self.unavailable_in_a_row = self.unavailable_in_a_row + 1 if unavailable else 0


def build_compendium(settings: Settings, sources: SourcePlan, summarizer: Summarizer,
                     progress: Notice = lambda message: None, *, jobs: int = 1,
                     clock: Callable[[], float] = time.perf_counter) -> BuildSummary:
    """Run the three stages; see the module docstring. Missing sources are skipped (reported),
    never an error; an exception in a stage leaves the cache with everything finished so far."""
    out = knowledge_dir(settings)
    cache = JsonCache(out / "cache")
    times: list[tuple[str, float]] = []

    start = clock()
    progress("crawl: reading sources")
    segments, reports, warnings = crawl(sources, cache, progress)
    times.append(("crawl", clock() - start))

    start = clock()
    unique = list({s.content_hash: s for s in segments}.values())
    summaries, counts = summarize_segments(unique, summarizer, cache, progress, jobs, clock)
    times.append(("summarize", clock() - start))

    start = clock()
    progress("synthesize: merging summaries into entries")
    synthesis = synthesize((s, summaries[s.content_hash]) for s in segments)
    compendium = docs = None
    if segments:
        compendium, docs = generated_compendium_path(settings), out / "metric_docs"
        write_compendium(synthesis.entries, compendium)
        write_metric_docs(synthesis.entries, docs)
    else:
        warnings.append("nothing was crawled: no compendium written (an older one is kept)")
    times.append(("synthesize", clock() - start))

    summary = BuildSummary(
        sources=tuple(reports), segments=len(unique), summarized_new=counts.new,
        summarized_cached=counts.cached, llm=counts.llm, rules=counts.rules,
        fallback=counts.fallback, llm_tokens=counts.tokens, metrics=synthesis.metrics,
        families=synthesis.families, entries=len(synthesis.entries), stage_seconds=tuple(times),
        compendium=compendium, metric_docs=docs, summarizer=summarizer.key,
        warnings=tuple(warnings + counts.warnings + list(synthesis.rejected)))
    if segments:
        write_json_atomic(out / "build.json", summary.to_json(), indent=1)
    return summary


def crawl(plan: SourcePlan, cache: JsonCache,
          progress: Notice) -> tuple[list[Segment], list[SourceReport], list[str]]:
    """Stage 1: every adapter's segments (in adapter order), a report per source, warnings."""
    segments: list[Segment] = []
    reports: list[SourceReport] = []
    warnings: list[str] = []
    for adapter in plan.adapters:
        report, found, warned = _crawl_one(adapter, plan.context, cache)
        progress(f"crawl: {adapter.name}: {report.status}, {report.segments} segments"
                 + (f" ({report.note})" if report.note else ""))
        segments += found
        reports.append(report)
        warnings += warned
    return segments, reports, warnings


def _crawl_one(adapter: SourceAdapter, ctx: CrawlContext,
               cache: JsonCache) -> tuple[SourceReport, list[Segment], list[str]]:
    try:
        gathered = adapter.gather(ctx)
    except (OSError, PragmaError) as exc:
        return SourceReport(adapter.name, adapter.profiler, "failed", note=str(exc)), [], [
            f"{adapter.name}: {exc}"]
    warnings = [f"{adapter.name}: {w}" for w in gathered.warnings]
    if gathered.skipped:
        return (SourceReport(adapter.name, adapter.profiler, "skipped", note=gathered.skipped),
                [], warnings)
    segments: list[Segment] = []
    parsed = 0
    for doc in gathered.documents:
        key = digest(adapter.name, adapter.version, doc.origin, doc.text)
        hit = cache.get("crawl", key)
        if hit is not None:
            segments += [Segment.from_json(s) for s in hit["segments"]]
            continue
        try:
            found = adapter.parse(doc)
        except ValueError as exc:  # one malformed document does not stop the source
            warnings.append(f"{adapter.name}: could not parse {doc.origin}: {exc}")
            continue
        parsed += 1
        cache.put("crawl", key, {"origin": doc.origin, "segments": [s.to_json() for s in found]})
        segments += found
    report = SourceReport(adapter.name, adapter.profiler, "ok", len(gathered.documents), parsed,
                          len(segments))
    return report, segments, warnings


def summary_key(segment: Segment, summarizer_key: str) -> str:
    """The cache key of a segment's summary by one summarizer."""
    return digest(segment.content_hash, summarizer_key)


def summarize_segments(segments: Sequence[Segment], summarizer: Summarizer, cache: JsonCache,
                       progress: Notice, jobs: int = 1,
                       clock: Callable[[], float] = time.perf_counter,
                       ) -> tuple[dict[str, SegmentSummary], _Counts]:
    """Stage 2: a summary per segment hash, from the cache or new (stored as soon as made)."""
    counts = _Counts()
    summaries: dict[str, SegmentSummary] = {}
    todo = []
    for segment in segments:
        hit = cache.get("summary", summary_key(segment, summarizer.key))
        if hit is not None:
            summaries[segment.content_hash] = SegmentSummary.from_json(hit)
            counts.add(summaries[segment.content_hash], new=False)
        else:
            todo.append(segment)
    progress(f"summarize: {counts.cached} cached, {len(todo)} to do with {summarizer.key}")
    ticker = _Ticker(progress, clock, len(todo))

    def record(segment: Segment, summary: SegmentSummary) -> None:
        key = summarizer.key if not summary.fell_back else RuleSummarizer.key
        cache.put("summary", summary_key(segment, key), summary.to_json())
        summaries[segment.content_hash] = summary
        counts.add(summary, new=True)
        ticker.tick(counts)

    if jobs <= 1 or not summarizer.uses_llm:
        for segment in todo:
            record(segment, _choose(summarizer, counts).summarize(segment))
    else:
        _summarize_parallel(todo, summarizer, counts, record, jobs)
    if counts.unavailable_in_a_row >= BREAKER_LIMIT:
        counts.warnings.append(f"the LLM stopped answering ({BREAKER_LIMIT} failures in a row); "
                               "the remaining segments were summarized by the rules")
    return summaries, counts


def _choose(summarizer: Summarizer, counts: _Counts) -> Summarizer:
    """The LLM summarizer, unless it failed BREAKER_LIMIT times in a row: then the rules (the
    rest of the build would only wait for timeouts)."""
    if summarizer.uses_llm and counts.unavailable_in_a_row >= BREAKER_LIMIT:
        return _BrokenLLM()
    return summarizer


class _BrokenLLM(RuleSummarizer):
    """The rules, standing in for an LLM that stopped answering."""

    def summarize(self, segment: Segment) -> SegmentSummary:
        summary = super().summarize(segment)
        return SegmentSummary(summary.segment_hash, summary.method, summary.notes,
                              fallback_reason="unavailable: skipped after repeated failures")


def _summarize_parallel(todo: Sequence[Segment], summarizer: Summarizer, counts: _Counts,
                        record: Callable[[Segment, SegmentSummary], None], jobs: int) -> None:
    """LLM requests `jobs` at a time; results are recorded in the calling thread."""
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="summarize")
    pending: dict[Future[SegmentSummary], Segment] = {}
    queue = iter(todo)
    try:
        while True:
            while len(pending) < jobs:
                segment = next(queue, None)
                if segment is None:
                    break
                chosen = _choose(summarizer, counts)
                pending[pool.submit(chosen.summarize, segment)] = segment
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                record(pending.pop(future), future.result())
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


class _Ticker:
    """Notice lines for the summarize stage, at most one every two seconds (and the last)."""

    def __init__(self, progress: Notice, clock: Callable[[], float], total: int) -> None:
        self.progress, self.clock, self.total = progress, clock, total
        self.done = 0
        self.last = clock()

    def tick(self, counts: _Counts) -> None:
        self.done += 1
        now = self.clock()
        if self.done == self.total or now - self.last >= 2.0:
            self.last = now
            self.progress(f"summarize: {self.done}/{self.total} new ({counts.llm} by LLM, "
                          f"{counts.fallback} fallback)")
