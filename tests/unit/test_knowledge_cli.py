"""`pragma-ncu knowledge show|search`, run through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pragma_ncu.cli.knowledge_cmd import knowledge

STALL = "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def run(data_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(knowledge, list(args), env={"PRAGMA_NCU_DATA": str(data_dir)})


def test_show_resolves_a_suffixed_name_and_lists_strategies(data_dir: Path) -> None:
    result = run(data_dir, "show", f"{STALL}.ratio")
    assert result.exit_code == 0, result.output
    assert f"-> entry {STALL}" in result.output
    assert "memory_latency" in result.output
    assert "strategy for memory_latency" in result.output


def test_show_json_has_entry_and_strategies(data_dir: Path) -> None:
    result = run(data_dir, "show", "cpu_core/topdown-be-bound/", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["query"] == "cpu_core/topdown-be-bound/"
    assert data["entry"]["name"] == "topdown-be-bound"
    assert {s["bottleneck"] for s in data["strategies"]} == {"backend_memory", "backend_core"}


def test_show_markdown(data_dir: Path) -> None:
    result = run(data_dir, "show", "launch__registers_per_thread", "--format", "md")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("# `launch__registers_per_thread`")
    assert "**Strategies:**" in result.output


def test_show_unknown_metric_suggests_names(data_dir: Path) -> None:
    result = run(data_dir, "show", "dram__throughputt.avg.pct_of_peak_sustained_elapsed")
    assert result.exit_code == 2  # a name it does not know: bad input
    assert "no compendium entry" in result.output
    assert "dram__throughput" in result.output
    assert "Traceback" not in result.output


def test_search_table_and_limit(data_dir: Path) -> None:
    result = run(data_dir, "search", "bank", "conflicts", "--limit", "3")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].split() == ["name", "profiler", "title", "indicates"]
    assert len(lines) == 2 + 3  # header, rule, three rows
    assert "l1tex__data_bank_conflicts_pipe_lsu_mem_shared" in result.output


def test_search_json_and_markdown(data_dir: Path) -> None:
    result = run(data_dir, "search", "topdown", "--format", "json", "--limit", "4")
    rows = json.loads(result.output)
    assert len(rows) == 4 and all(r["profiler"] == "perf" for r in rows)
    md = run(data_dir, "search", "occupancy", "--format", "md")
    assert md.output.startswith("| name")


def test_search_without_hits_says_so(data_dir: Path) -> None:
    result = run(data_dir, "search", "qqqzzz")
    assert result.exit_code == 0
    assert "no entry matches" in result.output


def test_generated_compendium_in_the_data_folder_is_used(data_dir: Path) -> None:
    folder = data_dir / "knowledge"
    folder.mkdir(parents=True)
    entry = {"name": "smsp__made_up_counter", "profiler": "ncu", "title": "Made-up counter",
             "group": "scheduler_instructions", "unit": "", "meaning": "generated meaning",
             "hardware_unit": "SMSP", "indicates": [], "reading": "generated reading",
             "sources": ["ncu --query-metrics"]}
    (folder / "compendium.json").write_text(json.dumps({"version": 1, "entries": [entry]}))
    result = run(data_dir, "show", "smsp__made_up_counter.sum", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["entry"]["origin"] == "generated"


def test_broken_generated_compendium_is_a_clean_error(data_dir: Path) -> None:
    folder = data_dir / "knowledge"
    folder.mkdir(parents=True)
    (folder / "compendium.json").write_text("{")
    result = run(data_dir, "search", "dram")
    assert result.exit_code == 2  # a bad file: bad input
    assert "compendium.json" in result.output and "Traceback" not in result.output


def test_the_group_is_registered_on_the_main_command(data_dir: Path) -> None:
    from pragma_ncu.cli.main import cli

    result = CliRunner().invoke(cli, ["knowledge", "search", "dram", "--limit", "1"],
                                env={"PRAGMA_NCU_DATA": str(data_dir)})
    assert result.exit_code == 0, result.output
    assert "dram__" in result.output
