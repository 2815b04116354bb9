"""Source adapters of `knowledge build` on synthetic fixtures, with a fake command runner."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from pragma_ncu.infra.errors import SpecError
from pragma_ncu.knowledge.adapters import ADAPTERS, adapter_names, select_adapters
from pragma_ncu.knowledge.htmltext import html_sections, split_long
from pragma_ncu.knowledge.ncu_sources import (
    NcuDocs,
    NcuMetricList,
    NcuRules,
    NcuSections,
    parse_metric_table,
    rule_facts,
)
from pragma_ncu.knowledge.pbtext import PbTextError, first, parse_pbtext
from pragma_ncu.knowledge.perf_sources import (
    OnlinePages,
    PerfEvents,
    PerfManPages,
    parse_perf_json,
    parse_perf_text,
)
from pragma_ncu.knowledge.segments import Document, Segment
from pragma_ncu.knowledge.sources import CommandResult, CrawlContext

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "knowledge"
NCU = FIX / "ncu"
PERF = FIX / "perf"


class FakeRunner:
    """Answers commands from fixture files; records what was run."""

    def __init__(self, answers: dict[str, CommandResult]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], timeout_s: float) -> CommandResult:
        self.calls.append(list(argv))
        for prefix, result in self.answers.items():
            if " ".join(argv).startswith(prefix):
                return result
        return CommandResult(127, "", f"{argv[0]}: not found", missing=True)


def ok(path: Path) -> CommandResult:
    return CommandResult(0, path.read_text())


def segments(adapter: object, ctx: CrawlContext) -> list[Segment]:
    gathered = adapter.gather(ctx)  # type: ignore[attr-defined]
    assert not gathered.skipped, gathered.skipped
    return [s for d in gathered.documents for s in adapter.parse(d)]  # type: ignore[attr-defined]


def test_html_sections_drop_navigation_scripts_and_footers() -> None:
    html = (NCU / "docs" / "ProfilingGuide" / "index.html").read_text()
    title, sections = html_sections(html)
    assert title == "2. Kernel Profiling Guide"
    text = "\n".join(s.text for s in sections)
    for junk in ("Sidebar link", "Breadcrumb", "Footer text", "DOCUMENTATION_OPTIONS", "color:",
                 "\u00b6"):
        assert junk not in text
    headings = [s.heading for s in sections]
    assert headings == ["2. Kernel Profiling Guide", "2.1. Memory Throughput",
                        "2.2. Shared Memory", "2.3. Warp Stalls", "2.3.1. Launch Limits"]
    shared = sections[2]
    assert shared.anchor == "shared-memory" and shared.level == 2
    assert "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum | shared-memory wavefronts" \
        in shared.text
    stalls = sections[3]
    assert "ncu --metrics smsp__pcsamp_warps_issue_stalled_long_scoreboard ./app" in stalls.text


def test_split_long_keeps_paragraphs_whole_when_it_can() -> None:
    text = "\n\n".join(f"paragraph {i} " + "x" * 50 for i in range(10))
    pieces = split_long(text, 200)
    assert all(len(p) <= 200 for p in pieces)
    assert "\n\n".join(pieces) == text
    assert split_long("y" * 450, 200) == ["y" * 200, "y" * 200, "y" * 50]


def test_ncu_docs_one_segment_per_heading_and_release_notes_skipped() -> None:
    found = segments(NcuDocs(), CrawlContext(ncu_docs=NCU / "docs"))
    assert all(s.kind == "doc" and s.profiler == "ncu" for s in found)
    assert not any("Release" in s.title or "ReleaseNotes" in s.origin for s in found)
    titles = [s.title for s in found]
    assert "2. Kernel Profiling Guide \u203a 2.2. Shared Memory" in titles
    shared = next(s for s in found if s.title.endswith("Shared Memory"))
    assert shared.origin.endswith("ProfilingGuide/index.html#shared-memory")
    assert "Primary sidebar" not in " ".join(s.text for s in found)


def test_ncu_docs_missing_is_skipped_with_a_reason(tmp_path: Path) -> None:
    assert "--ncu-docs" in NcuDocs().gather(CrawlContext()).skipped
    assert "not a folder" in NcuDocs().gather(CrawlContext(ncu_docs=tmp_path / "no")).skipped


def test_metric_table_with_columns_wrapped_lines_and_overflow() -> None:
    rows = {r.name: r for r in parse_metric_table((NCU / "query_metrics.txt").read_text())}
    assert len(rows) == 8
    assert rows["dram__bytes_read"].unit == "byte"
    assert rows["gpu__dram_throughput"].type == "Throughput"
    assert rows["gpu__dram_throughput"].unit == "%"
    assert rows["launch__occupancy_limit_registers"].description == (
        "blocks per SM allowed by the register usage of each thread")
    overflow = rows["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld"]
    assert overflow.type == "Counter"
    assert overflow.description.endswith("caused by bank conflicts")


def test_metric_table_without_rulers() -> None:
    text = ("==PROF== note\nsm__cycles_active   cycles with at least one warp\n"
            "   that was resident\nnot_a_metric words\ndram__bytes  bytes moved\n")
    rows = parse_metric_table(text)
    assert [(r.name, r.description) for r in rows] == [
        ("sm__cycles_active", "cycles with at least one warp that was resident"),
        ("dram__bytes", "bytes moved")]


def test_metric_list_runs_ncu_for_the_chip() -> None:
    runner = FakeRunner({"ncu --query-metrics": ok(NCU / "query_metrics.txt")})
    found = segments(NcuMetricList(), CrawlContext(ncu="ncu", chip="ga100", run=runner))
    assert runner.calls == [["ncu", "--query-metrics", "--chip", "ga100"]]
    assert len(found) == 8
    dram = next(s for s in found if s.title == "dram__bytes_read")
    assert dram.kind == "metric" and "Unit: byte" in dram.text
    assert dram.origin == "ncu --query-metrics --chip ga100"


def test_metric_list_without_ncu_or_when_it_fails_is_skipped() -> None:
    assert "ncu not found" in NcuMetricList().gather(CrawlContext()).skipped
    failing = FakeRunner({"ncu": CommandResult(1, "", "==ERROR== unknown chip 'zz'")})
    note = NcuMetricList().gather(CrawlContext(ncu="ncu", chip="zz", run=failing)).skipped
    assert "exit 1" in note and "unknown chip" in note
    missing = FakeRunner({})
    assert "could not be run" in NcuMetricList().gather(
        CrawlContext(ncu="/nope/ncu", run=missing)).skipped


def test_pbtext_parses_nested_messages_and_joined_strings() -> None:
    message = parse_pbtext('A: "x" "y"  # comment\nB { C: 3 D: CC_90 E [1, 2] }\n')
    assert first(message, "A") == "xy"
    sub = message[1][1]
    assert isinstance(sub, list) and first(sub, "D") == "CC_90"
    assert [v for k, v in sub if k == "E"] == ["1", "2"]
    with pytest.raises(PbTextError):
        parse_pbtext("A { B: 1")


def test_section_lists_metrics_with_labels() -> None:
    [segment] = segments(NcuSections(), CrawlContext(ncu_sections=NCU / "sections"))
    assert segment.kind == "section" and segment.title == "Memory Traffic"
    assert "(MemoryTraffic)" in segment.text
    assert "Description: How many bytes the kernel moved through each memory level, and how" \
        in segment.text
    assert "- DRAM Bytes Read = dram__bytes_read.sum" in segment.text
    assert "{UNIT}" not in segment.text  # placeholder labels are dropped, the metric stays
    assert "- breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed" \
        in segment.text


def test_malformed_section_falls_back_to_regex() -> None:
    doc = Document("/x/Broken.section", 'Identifier: "B"\nMetrics { Label: "L" Name: "a__b"\n')
    [segment] = NcuSections().parse(doc)
    assert "- L = a__b" in segment.text


def test_rules_segment_per_rule_and_helpers_ignored() -> None:
    found = segments(NcuRules(), CrawlContext(ncu_sections=NCU / "sections"))
    assert [s.title for s in found] == ["Shared Bank Conflicts"]
    text = found[0].text
    assert "Rule: Shared Bank Conflicts (SharedBanks)" in text
    assert "Section: MemoryTraffic" in text
    assert "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum" in text
    assert "pad the array so that the threads of a warp touch different banks" in text
    assert "About {...}% of the shared-memory" in text


def test_rule_facts_survive_syntax_errors() -> None:
    facts = rule_facts('def get_name():\n    return "Broken"\ndef apply(h:\n')
    assert facts == {"name": "Broken"}


def test_perf_json_events_tracepoints_dropped() -> None:
    events = {e.name: e for e in parse_perf_json((PERF / "perf_list.json").read_text())}
    assert "sched:sched_switch" not in events
    assert events["l1d.replacement"].topic == "cache"
    assert events["l1d.replacement"].description.startswith("Counts cache lines")
    assert events["tma_retiring"].type == "Metric" and events["tma_retiring"].unit == "100%"
    assert events["task-clock"].aliases == ()


def test_perf_text_fallback_parses_types_aliases_and_details() -> None:
    events = {e.name: e for e in parse_perf_text((PERF / "perf_list_details.txt").read_text())}
    assert set(events) == {"branch-misses", "cache-misses", "context-switches", "task-clock",
                           "l1d.replacement", "branch_misprediction_ratio"}
    assert events["context-switches"].aliases == ("cs",)
    l1d = events["l1d.replacement"]
    assert l1d.description == "Lines filled into the L1 data cache, each evicting another line."
    assert l1d.pmu == "cpu_core" and l1d.expression == "cpu_core/event=0x51,umask=0x1/"
    ratio = events["branch_misprediction_ratio"]
    assert ratio.type == "Metric" and ratio.topic == "branch_prediction"


def test_perf_events_prefers_json_and_falls_back_to_text() -> None:
    json_runner = FakeRunner({"perf list -j": ok(PERF / "perf_list.json")})
    found = segments(PerfEvents(), CrawlContext(run=json_runner))
    assert len(found) == 7 and found[0].origin == "perf list -j"
    old_perf = FakeRunner({"perf list -j": CommandResult(129, "", "unknown switch `j'"),
                           "perf list --details": ok(PERF / "perf_list_details.txt")})
    found = segments(PerfEvents(), CrawlContext(run=old_perf))
    assert {s.origin for s in found} == {"perf list --details"}
    assert len(old_perf.calls) == 2


def test_perf_missing_is_skipped() -> None:
    assert "perf not found" in PerfEvents().gather(CrawlContext(run=FakeRunner({}))).skipped
    assert "man not found" in PerfManPages().gather(CrawlContext(run=FakeRunner({}))).skipped


def test_man_pages_split_by_section() -> None:
    runner = FakeRunner({"man -P cat perf-stat": ok(PERF / "perf-stat.man.txt"),
                         "man": CommandResult(16, "", "No manual entry")})
    gathered = PerfManPages().gather(CrawlContext(run=runner))
    assert gathered.warnings == ("no man page perf-list", "no man page perf-record")
    found = [s for d in gathered.documents for s in PerfManPages().parse(d)]
    assert [s.title for s in found] == ["perf-stat(1) \u203a NAME",
                                        "perf-stat(1) \u203a DESCRIPTION",
                                        "perf-stat(1) \u203a OPTIONS"]
    assert found[1].origin == "man perf-stat#description"


def test_online_pages_only_when_asked_and_failures_are_warnings() -> None:
    pages = OnlinePages("ncu-online", "ncu", ("http://a.example/x", "http://b.example/y"))
    assert "offline" in pages.gather(CrawlContext()).skipped

    def fetch(url: str, timeout_s: float) -> str:
        if "a.example" in url:
            raise OSError("name resolution failed")
        return "<html><body><h1>Page</h1><p>about sm__throughput.avg</p></body></html>"

    gathered = pages.gather(CrawlContext(online=True, fetch=fetch))
    assert not gathered.skipped
    assert gathered.warnings == ("could not fetch http://a.example/x: name resolution failed",)
    [segment] = pages.parse(gathered.documents[0])
    assert segment.origin == "http://b.example/y" and "sm__throughput" in segment.text


def test_registry_names_and_selection() -> None:
    assert adapter_names() == ("ncu-docs", "ncu-metrics", "ncu-sections", "ncu-rules",
                               "perf-events", "perf-man", "ncu-online", "perf-online")
    assert select_adapters() == ADAPTERS
    assert [a.name for a in select_adapters(["perf-man", "ncu-docs"])] == ["ncu-docs", "perf-man"]
    with pytest.raises(SpecError, match="one of ncu-docs"):
        select_adapters(["nsys"])


def test_segment_hash_ignores_origin_but_not_text() -> None:
    a = Segment.make("s", "ncu", "doc", "T", "text", "/one")
    b = Segment.make("s", "ncu", "doc", "T", "text", "/two")
    c = Segment.make("s", "ncu", "doc", "T", "text!", "/one")
    assert a.content_hash == b.content_hash != c.content_hash
    assert Segment.from_json(a.to_json()) == a
