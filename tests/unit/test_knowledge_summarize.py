"""Segment summaries: the deterministic rules, and the LLM path against the scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu.infra.errors import LLMBadReply
from pragma_ncu.infra.llm import LLMClient, LLMConfig
from pragma_ncu.knowledge import extract
from pragma_ncu.knowledge.schema import BOTTLENECKS
from pragma_ncu.knowledge.segments import Segment, SegmentSummary
from pragma_ncu.knowledge.summarize import LLMSummarizer, RuleSummarizer, notes_from_reply
from tests.fakes.llm_server import FakeLLMServer, Reply

METRIC = Segment.make("ncu-metrics", "ncu", "metric", "dram__bytes_read",
                      "dram__bytes_read: number of bytes read from DRAM\nType: Counter\nUnit: byte",
                      "ncu --query-metrics --chip gh100")
DOC = Segment.make(
    "ncu-docs", "ncu", "doc", "Guide \u203a Shared Memory",
    "Bank conflicts replay accesses. The counter\nl1tex__data_bank_conflicts_pipe_lsu_mem_shared"
    ".sum counts the extra wavefronts. A value above 10% of the wavefronts means the layout "
    "should change.\n\nUnrelated paragraph.", "/docs/Guide/index.html#shared")


@pytest.mark.parametrize("name, bottleneck", [
    ("dram__bytes_read", "memory_bandwidth"),
    ("gpu__dram_throughput", "memory_bandwidth"),
    ("smsp__pcsamp_warps_issue_stalled_long_scoreboard", "memory_latency"),
    ("smsp__average_warp_latency_issue_stalled_long_scoreboard", "memory_latency"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st", "shared_bank_conflicts"),
    ("launch__occupancy_limit_registers", "occupancy_registers"),
    ("launch__occupancy_limit_shared_mem", "occupancy_shared"),
    ("launch__occupancy_limit_blocks", "occupancy_block"),
    ("launch__waves_per_multiprocessor", "tail_effect"),
    ("l1tex__t_bytes_pipe_lsu_mem_local_op_st", "register_spills"),
    ("sm__pipe_tensor_cycles_active", "tensor_core"),
    ("smsp__pcsamp_warps_issue_stalled_barrier", "barrier_stall"),
    ("sm__inst_executed_pipe_xu", "compute_sfu"),
])
def test_bottleneck_rules_by_metric_name(name: str, bottleneck: str) -> None:
    found = extract.bottlenecks_for(name)
    assert bottleneck in found
    assert set(found) <= set(BOTTLENECKS)


def test_bottleneck_rules_by_keywords_and_perf() -> None:
    assert extract.bottlenecks_for("x__y", "the loads are uncoalesced") == ("uncoalesced_access",)
    assert extract.bottlenecks_for("sm__cycles_active") == ()
    assert extract.bottlenecks_for("branch-misses", profiler="perf") == ("bad_speculation",)
    assert "frontend_bound" in extract.bottlenecks_for("tma_frontend_bound", profiler="perf")


def test_metric_names_are_reduced_to_base_names() -> None:
    text = ("use dram__bytes_read.sum.per_second and breakdown:sm__throughput.avg or "
            "smsp__pcsamp_warps_issue_stalled_ + reason, not __syncthreads or a/b__c")
    assert extract.ncu_metric_names(text) == ["dram__bytes_read", "sm__throughput"]


def test_rules_summarize_a_metric_row() -> None:
    summary = RuleSummarizer().summarize(METRIC)
    assert summary.method == "rules" and summary.segment_hash == METRIC.content_hash
    [note] = summary.notes
    assert note.name == "dram__bytes_read"
    assert note.meaning == "number of bytes read from DRAM"
    assert note.unit == "byte" and note.hardware_unit == "DRAM (device memory)"
    assert note.indicates == ("memory_bandwidth",) and note.group == "memory"


def test_rules_summarize_prose_with_the_sentences_about_the_metric() -> None:
    [note] = RuleSummarizer().summarize(DOC).notes
    assert note.name == "l1tex__data_bank_conflicts_pipe_lsu_mem_shared"
    assert note.meaning.startswith("The counter l1tex__data_bank_conflicts")  # wrapped lines joined
    assert "Unrelated" not in note.meaning
    assert "above 10%" not in note.meaning  # that sentence does not name the metric
    assert note.indicates == ("shared_bank_conflicts",)


def test_summary_round_trips_through_json() -> None:
    summary = RuleSummarizer().summarize(METRIC)
    assert SegmentSummary.from_json(summary.to_json()) == summary


def good_reply(name: str = "dram__bytes_read") -> Reply:
    return Reply.json({"metrics": [
        {"name": f"{name}.sum", "title": "DRAM bytes read", "meaning": "Bytes read from DRAM.",
         "unit": "byte", "hardware_unit": "DRAM", "indicates": ["memory_bandwidth", "nonsense"],
         "reading": "High with low SM throughput: memory bound.", "hints": "move fewer bytes",
         "group": "memory"},
        {"name": "made_up__metric", "meaning": "not in the text"},
    ]})


def llm(server: FakeLLMServer, **options: float) -> LLMSummarizer:
    config = LLMConfig(model="fake", base_url=server.base_url,
                       **{"timeout_s": 5.0, "max_retries": 1, "backoff_s": 0.0, **options})
    return LLMSummarizer(LLMClient(config, sleep=lambda s: None))


def test_llm_summary_is_validated(llm_server: FakeLLMServer) -> None:
    llm_server.script([good_reply()])
    summary = llm(llm_server).summarize(METRIC)
    assert summary.method == "llm" and summary.model == "fake" and not summary.fell_back
    assert summary.tokens > 0
    [note] = summary.notes  # the invented name is dropped
    assert note.name == "dram__bytes_read"
    assert note.indicates == ("memory_bandwidth",)  # unknown bottleneck keys dropped
    assert note.hints == ("move fewer bytes",)
    [request] = llm_server.requests
    user = request["messages"][1]["content"]
    assert "number of bytes read from DRAM" in user and "occupancy_registers" in user
    assert request["messages"][0]["role"] == "system"


def test_malformed_reply_is_retried_once_then_accepted(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.text("I think it measures bytes."), good_reply()])
    summary = llm(llm_server).summarize(METRIC)
    assert summary.method == "llm"
    assert len(llm_server.requests) == 2


def test_malformed_twice_falls_back_to_rules(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.text("nope"), Reply.json({"metrics": [{"title": "no name"}]})])
    summary = llm(llm_server).summarize(METRIC)
    assert summary.method == "rules" and summary.fell_back
    assert summary.fallback_reason.startswith("bad reply")
    assert summary.notes == RuleSummarizer().summarize(METRIC).notes
    assert len(llm_server.requests) == 2


def test_slow_endpoint_times_out_and_falls_back(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.slow(5.0, good_reply())])
    summary = llm(llm_server, timeout_s=0.3, max_retries=0).summarize(METRIC)
    assert summary.method == "rules"
    assert summary.fallback_reason.startswith("unavailable") and "0.3 s" in summary.fallback_reason
    assert len(llm_server.requests) == 1  # unavailable is not retried by the summarizer


def test_rate_limited_then_success(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.rate_limited(0), good_reply()])
    summary = llm(llm_server).summarize(METRIC)
    assert summary.method == "llm"
    assert len(llm_server.requests) == 2


def test_key_names_model_and_template(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    first = llm(llm_server)
    assert first.key.startswith("llm-v1:fake@http://127.0.0.1")
    template = tmp_path / "t.j2"
    template.write_text("{{ part }} {{ segment.title }} {{ text }}")
    other = LLMSummarizer(first.client, template=template)
    assert other.key != first.key
    assert other.messages(METRIC)[1]["content"].startswith("user dram__bytes_read")


@pytest.mark.parametrize("data, message", [
    ({"metrics": "x"}, "not a list"),
    ({"metrics": ["x"]}, "expected an object"),
    ({"metrics": [{"name": ""}]}, "no 'name'"),
    ({"metrics": [{"name": "dram__bytes_read", "meaning": {"a": 1}}]}, "expected a string"),
    ({"metrics": [{"name": "dram__bytes_read", "hints": [1, 2]}]}, "not a list of strings"),
])
def test_reply_validation_errors(data: dict[str, object], message: str) -> None:
    with pytest.raises(LLMBadReply, match=message):
        notes_from_reply(data, METRIC)
