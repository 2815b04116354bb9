"""Text output laid out to the terminal's width (pragma_ncu.report.terminal): $COLUMNS where set,
else 100 when standard output is not a terminal, never below 60; prose wrapped, tables kept
whole (their free-text columns cut to fit where they can). Issue 35: `explain` printed 22 of 47
lines wider than 120 columns with COLUMNS=80."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu.cli.main import cli
from pragma_ncu.report import terminal

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
RULE = re.compile(r"^\s*-+(\s+-+)+\s*$")  # a simple table's rule under its header
ROW = re.compile(r"^  (#|\d+) {2,}\S")  # a row of explain's application table (no rule)


def run(columns: int | None, *args: str | Path) -> list[str]:
    env = {"COLUMNS": str(columns)} if columns is not None else {"COLUMNS": ""}
    result = CliRunner(env=env).invoke(cli, list(map(str, args)))
    assert result.exit_code in (0, 1), result.output
    return result.output.splitlines()


def prose(lines: list[str]) -> list[str]:
    """The lines outside tables: a table is the line above its rule, the rule, and the lines
    below it up to a blank one."""
    out, in_table = [], False
    for i, line in enumerate(lines):
        starts = i + 1 < len(lines) and RULE.match(lines[i + 1])
        if starts or RULE.match(line):
            in_table = True
        elif not line.strip():
            in_table = False
        if not in_table and not starts and not ROW.match(line):
            out.append(line)
    return out


def long_words(line: str, width: int) -> bool:
    """A line made long by one word that no break could shorten (a URL, a metric name)."""
    return any(len(word) > width // 2 for word in line.split())


@pytest.mark.parametrize("target", [FIXTURES / "profiles" / "uncoalesced",
                                    FIXTURES / "profiles" / "sgemm",
                                    FIXTURES / "apps" / "pipeline" / "base"])
def test_explain_wraps_its_prose_to_columns_and_fits_its_tables(target: Path) -> None:
    lines = run(80, "explain", target)
    assert not [line for line in lines if len(line) > 120]
    wide = [line for line in prose(lines) if len(line) > 80 and not long_words(line, 80)]
    assert not wide, wide


def test_without_columns_the_width_is_100_and_never_below_60() -> None:
    target = FIXTURES / "profiles" / "uncoalesced"
    default = run(None, "explain", target)
    assert max(len(line) for line in prose(default) if not long_words(line, 100)) <= 100
    assert any(len(line) > 80 for line in prose(default))  # not the 80 of above
    narrow = run(20, "explain", target)
    assert max(len(line) for line in prose(narrow) if not long_words(line, 60)) <= 60
    assert terminal.clamp(None) == 100 and terminal.clamp(20) == 60 and terminal.clamp(150) == 150


def test_triage_follows_columns_too() -> None:
    pipeline = FIXTURES / "apps" / "pipeline"
    lines = run(80, "triage", pipeline / "base", pipeline / "new")
    wide = [line for line in prose(lines) if len(line) > 80 and not long_words(line, 80)]
    assert not wide, wide
    detail = run(80, "triage", pipeline / "base", pipeline / "new", "--kernel", "histogram256")
    wide = [line for line in prose(detail) if len(line) > 80 and not long_words(line, 80)]
    assert not wide, wide


def test_a_table_is_cut_in_its_free_text_columns_never_through() -> None:
    rows = [["1", "a" * 50, "b" * 70], ["2", "short", "c\n" + "d" * 90]]
    fitted = terminal.table(rows, ["#", "finding", "evidence"], 80, {1: 16, 2: 40})
    lines = fitted.splitlines()
    assert max(map(len, lines)) <= 80 and len(lines) == 5  # header, rule, 1 + 2 row lines
    assert "..." in lines[2] and lines[4].rstrip().endswith("...")
    kept = terminal.table(rows, ["#", "finding", "evidence"], 80, {1: 45, 2: 60})
    assert max(map(len, kept.splitlines())) > 80  # the minimums win: wider, never cut through
