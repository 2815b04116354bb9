"""`knowledge build` end to end, offline, on synthetic fixtures (fake ncu, perf and LLM)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.knowledge_build_cmd import build
from pragma_ncu.infra.llm import LLMClient, LLMConfig
from pragma_ncu.infra.settings import Settings, load_settings
from pragma_ncu.knowledge.adapters import ADAPTERS, select_adapters
from pragma_ncu.knowledge.compendium import generated_compendium_path
from pragma_ncu.knowledge.extract import ncu_metric_names
from pragma_ncu.knowledge.pipeline import (
    BREAKER_LIMIT,
    BuildSummary,
    SourcePlan,
    build_compendium,
)
from pragma_ncu.knowledge.schema import MetricEntry, entry_from_dict
from pragma_ncu.knowledge.segments import Segment, SegmentSummary
from pragma_ncu.knowledge.sources import CommandResult, CrawlContext
from pragma_ncu.knowledge.summarize import LLMSummarizer, RuleSummarizer
from tests.fakes.llm_server import FakeLLMServer, Reply

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "knowledge"
SEGMENTS = 27  # 7 doc + 8 metric + 1 section + 1 rule + 7 perf event + 3 man page


class Tools:
    """A fake ncu / perf / man: answers from files (which tests may edit)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], timeout_s: float) -> CommandResult:
        self.calls.append(list(argv))
        line = " ".join(argv)
        files = {"ncu --query-metrics": "ncu/query_metrics.txt", "perf list -j":
                 "perf/perf_list.json", "man -P cat perf-stat": "perf/perf-stat.man.txt"}
        for prefix, name in files.items():
            if line.startswith(prefix):
                return CommandResult(0, (self.root / name).read_text())
        if argv[0] == "man":
            return CommandResult(16, "", f"No manual entry for {argv[-1]}")
        return CommandResult(127, "", f"{argv[0]}: not found", missing=True)


@pytest.fixture
def fixtures(tmp_path: Path) -> Path:
    """A private copy of the fixtures, so tests can change a source."""
    root = tmp_path / "src"
    shutil.copytree(FIX, root)
    return root


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings({"HOME": str(tmp_path), "PRAGMA_NCU_DATA": str(tmp_path / "data")})


def plan(root: Path, names: Sequence[str] = ()) -> SourcePlan:
    ctx = CrawlContext(ncu="ncu", ncu_docs=root / "ncu" / "docs",
                       ncu_sections=root / "ncu" / "sections", run=Tools(root))
    return SourcePlan(select_adapters(names), ctx)


class Counting(RuleSummarizer):
    """The rules, counting calls; raises after `fail_after` calls when set (an interruption)."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls: list[str] = []
        self.fail_after = fail_after

    def summarize(self, segment: Segment) -> SegmentSummary:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("simulated Ctrl-C")
        self.calls.append(segment.title)
        return super().summarize(segment)


def load_entries(settings: Settings) -> dict[tuple[str, str], MetricEntry]:
    data = json.loads(generated_compendium_path(settings).read_text())
    assert data["version"] == 1
    entries = [entry_from_dict(e, "compendium.json") for e in data["entries"]]
    assert all(e.origin == "generated" for e in entries)
    return {(e.profiler, e.name): e for e in entries}


def test_offline_build_writes_a_schema_valid_compendium(fixtures: Path,
                                                        settings: Settings) -> None:
    progress: list[str] = []
    summary = build_compendium(settings, plan(fixtures), RuleSummarizer(), progress.append)
    status = {r.name: r.status for r in summary.sources}
    assert status == {"ncu-docs": "ok", "ncu-metrics": "ok", "ncu-sections": "ok",
                      "ncu-rules": "ok", "perf-events": "ok", "perf-man": "ok",
                      "ncu-online": "skipped", "perf-online": "skipped"}
    assert summary.segments == SEGMENTS
    assert (summary.summarized_new, summary.summarized_cached) == (SEGMENTS, 0)
    assert (summary.llm, summary.rules, summary.fallback) == (0, SEGMENTS, 0)
    assert summary.entries == summary.metrics + summary.families == len(load_entries(settings))
    assert [stage for stage, _ in summary.stage_seconds] == ["crawl", "summarize", "synthesize"]
    assert any(p.startswith("summarize: 27/27") for p in progress)

    entries = load_entries(settings)
    dram = entries[("ncu", "dram__bytes_read")]
    assert dram.title == "DRAM Bytes Read"  # the section's label
    assert dram.unit == "byte" and "memory_bandwidth" in dram.indicates
    assert dram.meaning.startswith("Number of bytes the DRAM served for reads.")
    assert {"ncu --query-metrics --chip gh100"} < set(dram.sources)
    assert any(s.endswith("MemoryTraffic.section") for s in dram.sources)
    assert any(s.endswith("index.html#memory-throughput") for s in dram.sources)
    conflicts = entries[("ncu", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld")]
    assert conflicts.indicates == ("shared_bank_conflicts",)
    assert any("pad the array" in h for h in conflicts.hints)
    assert entries[("ncu", "launch__occupancy_limit_registers")].indicates == (
        "occupancy_registers",)
    assert entries[("ncu", "smsp__pcsamp_warps_issue_stalled_long_scoreboard")].indicates == (
        "memory_latency",)
    family = entries[("ncu", "dram__")]
    assert family.family and set(family.related) == {"dram__bytes_read", "dram__bytes_write"}
    assert entries[("perf", "cache-misses")].indicates == ("backend_memory",)
    assert entries[("perf", "l1d.")].family
    assert ("ncu", "made_up__metric") not in entries


def test_output_goes_to_the_data_dir_only(fixtures: Path, settings: Settings) -> None:
    summary = build_compendium(settings, plan(fixtures), RuleSummarizer())
    out = settings.data_dir / "knowledge"
    assert summary.compendium == out / "compendium.json"
    docs = sorted(p.name for p in (out / "metric_docs").glob("*.md"))
    assert "index.md" in docs and "ncu-memory.md" in docs and "perf-cache.md" in docs
    memory = (out / "metric_docs" / "ncu-memory.md").read_text()
    assert "## `dram__bytes_read` — DRAM Bytes Read" in memory
    assert json.loads((out / "build.json").read_text())["entries"] == summary.entries


def test_rerun_uses_the_cache(fixtures: Path, settings: Settings) -> None:
    build_compendium(settings, plan(fixtures), RuleSummarizer())
    again = Counting()
    summary = build_compendium(settings, plan(fixtures), again)
    assert again.calls == []
    assert (summary.summarized_new, summary.summarized_cached) == (0, SEGMENTS)
    assert all(r.parsed == 0 for r in summary.sources)


def test_a_changed_segment_is_redone_alone(fixtures: Path, settings: Settings) -> None:
    build_compendium(settings, plan(fixtures), RuleSummarizer())
    table = fixtures / "ncu" / "query_metrics.txt"
    table.write_text(table.read_text().replace("number of bytes written to DRAM",
                                               "bytes the kernel wrote to DRAM"))
    again = Counting()
    summary = build_compendium(settings, plan(fixtures), again)
    assert again.calls == ["dram__bytes_write"]
    assert summary.summarized_new == 1
    parsed = {r.name: r.parsed for r in summary.sources if r.status == "ok"}
    assert parsed == {"ncu-docs": 0, "ncu-metrics": 1, "ncu-sections": 0, "ncu-rules": 0,
                      "perf-events": 0, "perf-man": 0}
    entry = load_entries(settings)[("ncu", "dram__bytes_write")]
    assert entry.meaning.startswith("Bytes the kernel wrote to DRAM.")


def test_interrupted_build_resumes(fixtures: Path, settings: Settings) -> None:
    with pytest.raises(KeyboardInterrupt):
        build_compendium(settings, plan(fixtures), Counting(fail_after=10))
    assert not generated_compendium_path(settings).exists()
    resumed = Counting()
    summary = build_compendium(settings, plan(fixtures), resumed)
    assert len(resumed.calls) == SEGMENTS - 10
    assert (summary.summarized_new, summary.summarized_cached) == (SEGMENTS - 10, 10)
    assert all(r.parsed == 0 for r in summary.sources)  # the crawl finished the first time


def test_corrupt_cache_entries_are_redone(fixtures: Path, settings: Settings) -> None:
    build_compendium(settings, plan(fixtures), RuleSummarizer())
    cached = sorted((settings.data_dir / "knowledge" / "cache" / "summary").rglob("*.json"))
    cached[0].write_text('{"cache_version": 1, "item": {"segm')  # a torn write
    again = Counting()
    assert build_compendium(settings, plan(fixtures), again).summarized_new == 1


def test_missing_sources_are_skipped_not_errors(tmp_path: Path, settings: Settings) -> None:
    def nothing(argv: Sequence[str], timeout_s: float) -> CommandResult:
        return CommandResult(127, "", "not found", missing=True)

    summary = build_compendium(settings, SourcePlan(ADAPTERS, CrawlContext(run=nothing)),
                               RuleSummarizer())
    notes = {r.name: r.note for r in summary.sources}
    assert all(r.status == "skipped" for r in summary.sources)
    assert "ncu not found" in notes["ncu-metrics"] and "perf not found" in notes["perf-events"]
    assert summary.compendium is None and summary.entries == 0
    assert any("nothing was crawled" in w for w in summary.warnings)
    assert not generated_compendium_path(settings).exists()


def responder(request: dict[str, Any]) -> Reply:
    """A well-behaved model: one item per metric (or the event) named in the segment."""
    user = request["messages"][-1]["content"]
    body = user.split("----- documentation text -----")[1].split("----- end of text -----")[0]
    names = ncu_metric_names(body)
    title = re.search(r"^Title: (.*)$", user, re.M)
    if not names and title and "Profiler: perf" in user and title.group(1) in body:
        names = [title.group(1)]
    return Reply.json({"metrics": [
        {"name": n, "title": f"LLM title of {n}", "meaning": f"What {n} measures, per the LLM.",
         "indicates": ["memory_bandwidth", "not_a_bottleneck"], "hints": []} for n in names]})


def llm_summarizer(server: FakeLLMServer, **options: float) -> LLMSummarizer:
    config = LLMConfig(model="fake", base_url=server.base_url,
                       **{"timeout_s": 5.0, "max_retries": 1, "backoff_s": 0.0, **options})
    return LLMSummarizer(LLMClient(config, sleep=lambda s: None))


def test_llm_build_in_parallel_then_cached(fixtures: Path, settings: Settings,
                                           llm_server: FakeLLMServer) -> None:
    llm_server.default = responder
    llm_server.script([Reply.rate_limited(0), Reply.text("not json at all")])
    summary = build_compendium(settings, plan(fixtures), llm_summarizer(llm_server), jobs=4)
    assert (summary.llm, summary.rules, summary.fallback) == (SEGMENTS, 0, 0)
    assert summary.llm_tokens > 0
    assert len(llm_server.requests) == SEGMENTS + 2  # one 429 retried, one bad reply retried
    entries = load_entries(settings)
    dram = entries[("ncu", "dram__bytes_read")]
    assert dram.title == "LLM title of dram__bytes_read"
    assert "What dram__bytes_read measures, per the LLM." in dram.meaning
    assert "not_a_bottleneck" not in dram.indicates
    before = len(llm_server.requests)
    again = build_compendium(settings, plan(fixtures), llm_summarizer(llm_server), jobs=4)
    assert len(llm_server.requests) == before
    assert (again.summarized_new, again.summarized_cached, again.llm) == (0, SEGMENTS, SEGMENTS)


def test_llm_fallbacks_are_counted_and_retried_next_time(fixtures: Path, settings: Settings,
                                                         llm_server: FakeLLMServer) -> None:
    llm_server.default = Reply.text("sorry, no JSON today")
    names = ["ncu-sections", "ncu-rules"]
    summary = build_compendium(settings, plan(fixtures, names), llm_summarizer(llm_server))
    assert (summary.llm, summary.rules, summary.fallback) == (0, 2, 2)
    assert len(llm_server.requests) == 4  # each segment: one reply, one retry
    assert load_entries(settings)[("ncu", "dram__bytes_read")].title == "DRAM Bytes Read"
    llm_server.default = responder
    again = build_compendium(settings, plan(fixtures, names), llm_summarizer(llm_server))
    assert (again.summarized_new, again.llm, again.fallback) == (2, 2, 0)


def test_unavailable_llm_stops_being_asked(fixtures: Path, settings: Settings,
                                           llm_server: FakeLLMServer) -> None:
    llm_server.default = Reply.server_error(503)
    summary = build_compendium(settings, plan(fixtures), llm_summarizer(llm_server,
                                                                        max_retries=0))
    assert len(llm_server.requests) == BREAKER_LIMIT
    assert summary.fallback == SEGMENTS and summary.rules == SEGMENTS
    assert any("stopped answering" in w for w in summary.warnings)


def test_slow_llm_times_out_and_falls_back(fixtures: Path, settings: Settings,
                                           llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.slow(5.0)])
    llm_server.default = responder
    summary = build_compendium(settings, plan(fixtures, ["ncu-sections", "ncu-rules"]),
                               llm_summarizer(llm_server, timeout_s=0.3, max_retries=0))
    assert (summary.llm, summary.fallback) == (1, 1)


def test_cli_build_json(fixtures: Path, tmp_path: Path) -> None:
    env = {"PRAGMA_NCU_DATA": str(tmp_path / "cli-data"), "PRAGMA_NCU_LLM_MODEL": ""}
    args = ["--source", "ncu-docs", "--source", "ncu-sections", "--source", "ncu-rules",
            "--ncu-docs", str(fixtures / "ncu" / "docs"),
            "--sections", str(fixtures / "ncu" / "sections"), "--no-llm", "--format", "json"]
    result = CliRunner().invoke(build, args, env=env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [s["name"] for s in data["sources"]] == ["ncu-docs", "ncu-sections", "ncu-rules"]
    assert data["segments"] == 9 and data["summarizer"] == "rules-v1"
    assert data["entries"] == data["metrics"] + data["families"] > 0
    assert set(data["stage_seconds"]) == {"crawl", "summarize", "synthesize"}
    assert "summaries by rules (--no-llm)" in result.stderr
    assert (tmp_path / "cli-data" / "knowledge" / "compendium.json").is_file()


def test_cli_table_and_unknown_source(fixtures: Path, tmp_path: Path) -> None:
    env = {"PRAGMA_NCU_DATA": str(tmp_path / "cli-data")}
    args = ["--source", "ncu-sections", "--sections", str(fixtures / "ncu" / "sections"),
            "--no-llm"]
    result = CliRunner().invoke(build, args, env=env)
    assert result.exit_code == 0, result.output
    assert "ncu-sections" in result.stdout and "compendium:" in result.stdout
    assert "time:" in result.stdout
    bad = CliRunner().invoke(build, ["--source", "nsys"], env=env)
    assert bad.exit_code == 2 and "nsys" in bad.output


def test_summary_is_frozen(fixtures: Path, settings: Settings) -> None:
    summary = build_compendium(settings, plan(fixtures, ["ncu-sections"]), RuleSummarizer())
    assert isinstance(summary, BuildSummary)
    with pytest.raises(AttributeError):
        summary.entries = 0  # type: ignore[misc]
