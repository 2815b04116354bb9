"""`pragma-ncu trace`: a run's rounds come out of the store and render as Markdown, JSON and a
self-contained HTML page with every number, citation and decision in it."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pragma_ncu.cli.trace_cmd import trace_command
from pragma_ncu.infra.store import Store, StoreError
from pragma_ncu.measure.records import RoundRecord
from pragma_ncu.measure.traces import load_trace
from pragma_ncu.report.markdown import fence
from pragma_ncu.report.trace import (
    Table,
    headline,
    md_table,
    render_html,
    render_markdown,
    roofline_chart,
    speedup_chart,
    trace_json,
)
from tests.recorded_run import ENTRY, FAILURE, SUMMARY, run_rounds, write_run


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "runs.sqlite"


@pytest.fixture
def run_id(store_path: Path) -> str:
    with Store.open(store_path) as store:
        return write_run(store)


def test_markdown_shows_rounds_both_columns_citations_and_verdicts(store_path: Path,
                                                                   run_id: str) -> None:
    with Store.open(store_path) as store:
        md = render_markdown(load_trace(store, run_id))
    for heading in ("## Round 0 — baseline (original)", "## Round 1 — tune (original)",
                    "## Round 2 — retune (original)", "## Round 3 — repair (llm repair 3)",
                    "### Historical best vs current", "### Analysis", "### Decision: stop"):
        assert heading in md
    round1 = md.split("## Round 1")[1].split("## Round 2")[0]
    assert "| time T=4096 (µs)" in round1 and "64.10 ±0.20" in round1 and "36.00 ±0.20" in round1
    assert "1.77×" in round1 and "92.1%" in round1 and "dram-bandwidth" in round1
    assert re.search(r"dram__throughput\S* *\| 50 *\| 91\.5 *\| \+83\.0%", round1)
    assert "`VEC`: 2, 4, 8 → 8, 16 — best at the edge" in round1
    assert "**accepted**: 1.77× faster" in round1
    flat = " ".join(md.split())  # prose is wrapped at 100 columns
    assert f"cites `{ENTRY}`" in flat and f"`{ENTRY}` — Long scoreboard stalls: Warps" in flat
    assert "`stall_long_sb` = 61%" in flat
    round2 = md.split("## Round 2")[1].split("## Round 3")[0]
    assert f"**Candidate failed:** {FAILURE}" in round2 and "**not accepted**" in round2
    assert "**repair route:** coder" in round2
    assert "| coder | gpt-test | 1200 | 800 | 4.2 s | 2 | ok |" in md
    assert "pruned 2 (registers 2), failed 1 (wrong_answer 1)" in flat
    assert "what an LLM would have added:** an LLM could have tried" in flat
    assert "- **baseline → best:** 64.10 → 36.20 µs, speedup **1.77×** (best from round 1)" in md
    assert md.count("<details>") == 2  # the original and the rewrite, each once


def test_json_is_the_run_and_records_that_round_trip(store_path: Path, run_id: str) -> None:
    with Store.open(store_path) as store:
        data = json.loads(json.dumps(trace_json(load_trace(store, run_id))))
    assert data["run"]["id"] == run_id and data["run"]["summary"]["best_round"] == 1
    assert [RoundRecord.from_json(r) for r in data["rounds"]] == run_rounds()


class _StrictParser(HTMLParser):
    """Fails on any end tag that does not close the innermost open element."""

    VOID = {"meta", "br", "hr", "img", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def test_html_is_balanced_self_contained_and_escaped(store_path: Path, run_id: str) -> None:
    with Store.open(store_path) as store:
        page = render_html(load_trace(store, run_id))
    parser = _StrictParser()
    parser.feed(page)
    parser.close()
    assert parser.errors == [] and parser.stack == []
    assert {"svg", "polyline", "circle", "rect", "details", "table"} <= parser.tags
    assert "a&lt;b" in page and "a<b" not in page
    assert "keep &lt;b&gt; out of it" in page and "<b>" not in page
    assert not re.search(r"https?://|<script|<link|\bsrc=|@import|url\(", page)
    assert FAILURE in page and ENTRY in page and "memory roofline" in page


def test_charts_mark_failed_rounds_and_the_copy_ceiling(store_path: Path, run_id: str) -> None:
    with Store.open(store_path) as store:
        trace = load_trace(store, run_id)
    chart = speedup_chart(trace, 64.1)
    assert chart is not None
    assert [m.kind for m in chart.marks].count("failed") == 1
    assert len(chart.line.split()) == 4 and chart.ref is not None
    best_ys = [m.y for m in chart.marks if m.kind == "best"]
    assert best_ys[0] > best_ys[1] == best_ys[3]  # the best got faster, then held
    roof = roofline_chart(trace)
    assert roof is not None and roof.ref is not None
    bars = [m for m in roof.marks if m.kind == "bar"]
    assert len(bars) == 4 and bars[0].height < bars[1].height
    assert roof.ref[0] < min(b.y for b in bars)  # 100% sits above every bar


def test_prefix_latest_and_clear_errors(store_path: Path) -> None:
    with Store.open(store_path) as store:
        first = write_run(store)
        second = write_run(store, kernel="rmsnorm")
        assert load_trace(store, first[:-1]).run.id == first
        assert load_trace(store, "latest").run.id == second
        assert load_trace(store, "LAST").run.kernel == "rmsnorm"
        common = next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)
        with pytest.raises(StoreError, match="ambiguous.*2 runs"):
            load_trace(store, first[:common])
        with pytest.raises(StoreError, match="no run 'zzz'.*trace --list"):
            load_trace(store, "zzz")
        bad = store.create_run("k", "k.toml", {})
        store.close_round(bad, 0, "tune", {"why": "not a round record"})
        with pytest.raises(StoreError, match="round 0: the stored decision is not a round"):
            load_trace(store, bad)


def test_latest_in_an_empty_store_is_an_error(store_path: Path) -> None:
    with Store.open(store_path) as store, pytest.raises(StoreError, match="no runs"):
        load_trace(store, "latest")


def test_headline_falls_back_to_the_rounds_without_a_summary(store_path: Path) -> None:
    with Store.open(store_path) as store:
        run = write_run(store, summary=None)
        trace = load_trace(store, run)
    head = headline(trace)
    assert head.baseline_us == pytest.approx(64.1) and head.best_round == 1
    assert head.best_us == pytest.approx((36.0 * 36.4) ** 0.5)
    assert head.stop_reason == SUMMARY["stop_reason"] and head.llm == "none"
    assert head.rounds == 4 and head.device == "NVIDIA H200"


def test_a_run_without_rounds_still_renders(store_path: Path) -> None:
    with Store.open(store_path) as store:
        run = store.create_run("k", "k.toml", {})
        trace = load_trace(store, run)
    assert "No round was recorded" in render_markdown(trace)
    assert "no speedup to plot" in render_html(trace)


def test_markdown_helpers_keep_tables_and_fences_intact() -> None:
    table = md_table(Table(("a", "b"), (("x|y", "1\n2"),)))
    assert "x\\|y" in table and "1 2" in table and table.count("\n") == 2
    assert fence("a ```` b", "cuda").startswith("`````cuda\n")


# --- the command ---------------------------------------------------------------------------


def _invoke(*args: str) -> Result:
    # The command itself, not the `pragma-ncu` group, so these tests do not depend on every
    # other command importing cleanly.
    return CliRunner().invoke(trace_command, list(args))


def test_cli_markdown_json_and_prefix(store_path: Path, run_id: str) -> None:
    result = _invoke(run_id[:-2], "--store", str(store_path))
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"# Trace of run `{run_id}`")
    result = _invoke("latest", "--store", str(store_path), "--format", "json")
    assert result.exit_code == 0 and json.loads(result.output)["run"]["id"] == run_id


def test_cli_html_to_a_file(store_path: Path, run_id: str, tmp_path: Path) -> None:
    out = tmp_path / "out" / "trace.html"
    result = _invoke(run_id, "--store", str(store_path), "--format", "html", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert f"wrote the html trace to {out}" in result.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_cli_list(store_path: Path, run_id: str) -> None:
    result = _invoke("--list", "--store", str(store_path))
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.output.splitlines() if ln.startswith(run_id))
    assert "silu_and_mul" in line and "done" in line and "64.10 → 36.20" in line
    assert "1.77×" in line and " 4 " in line
    result = _invoke("--list", "--store", str(store_path), "--format", "json")
    assert [r["id"] for r in json.loads(result.output)] == [run_id]


def test_cli_list_of_an_empty_store(store_path: Path) -> None:
    Store.open(store_path).close()
    result = _invoke("--list", "--store", str(store_path))
    assert result.exit_code == 0 and "no runs in" in result.output


def test_cli_errors_are_messages_not_tracebacks(store_path: Path, run_id: str,
                                                tmp_path: Path) -> None:
    result = _invoke("nope", "--store", str(store_path))
    assert result.exit_code == 2 and "Error: no run 'nope'" in result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    missing = tmp_path / "missing.sqlite"
    result = _invoke("latest", "--store", str(missing))
    assert result.exit_code == 2 and "no run store at" in result.output
    assert not missing.exists()
    result = _invoke("--store", str(store_path))
    assert result.exit_code == 2 and "--list" in result.output
