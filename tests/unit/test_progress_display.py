"""The progress display: plain lines for a log (no control characters; a phase's count each
tenth of its total or every 30 s), and the live form on a terminal, which fits the terminal's
width; and the events a search reports (points done of how many, the best so far, each
worker's count)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from pragma_ncu.cli import display
from pragma_ncu.cli.display import Live, Plain, progress_display
from pragma_ncu.infra.progress import (
    Advance,
    Begin,
    End,
    Event,
    Meter,
    Note,
    WorkerCount,
    logged,
    notes,
)
from pragma_ncu.search.autotune import tune_parameters
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Budget
from pragma_ncu.search.serial import Problem
from pragma_ncu.search.space import Space
from tests.fakes.replay import ReplayEvaluator
from tests.fakes.tuner import H200_LIMITS, synthetic_recording, synthetic_spec

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # anything but a newline and a tab


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _plain() -> tuple[Plain, io.StringIO, Clock]:
    out, clock = io.StringIO(), Clock()
    return Plain(out, clock), out, clock


def test_plain_lines_come_each_tenth_of_the_total_and_hold_no_control_character() -> None:
    show, out, clock = _plain()
    show(Note("round 1/5: tune (original)"))
    show(Begin("search", "searching 100 points with exhaustive", 100, "points"))
    for done in range(1, 101):
        clock.now += 0.5
        show(Advance("search", done, 100, "points", 70.0 + 100 / done,
                     (WorkerCount("gpu0", done - done // 2), WorkerCount("gpu1", done // 2))))
    show(End("search", "searched 100 points in 50.0 s"))
    lines = out.getvalue().splitlines()
    assert not CONTROL.search(out.getvalue())
    assert lines[:2] == ["  .. round 1/5: tune (original)",
                         "  .. searching 100 points with exhaustive"]
    counts = [line for line in lines if line.startswith("  .. search: ")]
    assert [c.split()[2] for c in counts] == [f"{10 * i}/100" for i in range(1, 11)]
    assert counts[3] == ("  .. search: 40/100 points [00:20<00:30,  2.00 points/s], best "
                         "72.50 µs; gpu0 20, gpu1 20")
    assert lines[-1] == "  .. searched 100 points in 50.0 s"


def test_a_slow_phase_or_one_without_a_total_says_where_it_is_every_30_seconds() -> None:
    show, out, clock = _plain()
    show(Begin("search", "searching with a time budget", None, "points"))
    for done in range(1, 41):
        clock.now += 4.0  # 160 s in all: a line at 32, 64, 96, 128, 160 s
        show(Advance("search", done, None, "points"))
    counts = [line for line in out.getvalue().splitlines() if "search: " in line]
    assert [c.split()[2] for c in counts] == ["8", "16", "24", "32", "40"]
    assert "points/s" in counts[0] and "<" not in counts[0]  # no total, no time left


def test_a_total_that_grows_is_followed() -> None:
    show, out, clock = _plain()
    meter = Meter(show, lambda _: None, "re-test", "re-testing 3 candidates", 2, "rounds")
    for done in (1, 2):
        clock.now += 1.0
        meter.advance(done)
    meter.advance(2, total=4)  # undecided: two more rounds
    for done in (3, 4):
        clock.now += 1.0
        meter.advance(done)
    meter.end()
    counts = [line.split()[2] for line in out.getvalue().splitlines() if "re-test: " in line]
    assert counts == ["1/2", "2/2", "3/4", "4/4"]


def test_without_a_display_a_phase_says_its_first_and_last_line() -> None:
    said: list[str] = []
    meter = Meter(None, said.append, "search", "searching 9 points", 9, "points")
    meter.advance(3)
    meter.end("searched 9 points")
    meter.end("said once")
    assert said == ["searching 9 points", "searched 9 points"]
    assert notes(None)("nothing") is None


def test_every_event_reaches_the_log_too(caplog: pytest.LogCaptureFixture) -> None:
    events: list[Event] = []
    report = logged(events.append)
    with caplog.at_level("DEBUG", logger="pragma_ncu"):
        report(Note("profiling at llama-7b"))
        report(Advance("search", 3, 9, "points", last="BLOCK=64: 71.20 µs"))
    assert len(events) == 2
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "profiling at llama-7b"),
        ("DEBUG", "search: 3/9 points (last: BLOCK=64: 71.20 µs)")]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_display_fits_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")  # the width where the stream has no terminal size
    out = _Terminal()
    with progress_display(True, out) as show:
        assert isinstance(show, Live)
        show(Note("round 1/5: tune (original), a note longer than the terminal is wide"))
        show(Begin("search", "searching 72 points with exhaustive on 2 workers", 72, "points"))
        for done in range(1, 73):
            show(Advance("search", done, 72, "points", 71.2,
                         (WorkerCount("gpu0", done // 2), WorkerCount("gpu1", done - done // 2)),
                         last="BLOCK=256,VEC=4,ROWS=2: 71.23 µs"))
        show(End("search", "searched 72 points in 9.0 s"))
    text = out.getvalue()
    assert "searched 72 points in 9.0 s" in text and "search:" in text
    drawn = [part for line in re.split(r"[\r\n]", text)
             for part in [re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", line)] if part.strip()]
    bars = [part for part in drawn if "|" in part]  # the redrawn lines (not what is said)
    assert bars and all(len(part) <= 60 for part in bars), max(bars, key=len)
    assert any("72/72" in part for part in bars)


def test_a_disabled_display_is_no_display() -> None:
    with progress_display(False) as show:
        assert show is None


def test_log_lines_are_written_above_the_bars() -> None:
    out = _Terminal()
    display.write("INFO pragma_ncu.pool.runner: starting the worker", out)
    assert out.getvalue() == "INFO pragma_ncu.pool.runner: starting the worker\n"


def test_a_search_reports_its_points_of_how_many_and_its_best(tmp_path: Path) -> None:
    """Exhaustive over the synthetic space: the total is the points feasible before compiling
    (the incumbent among them), each compiled point is one step (those that fail to build or
    are pruned by their registers too), and the best so far only improves."""
    spec = synthetic_spec(tmp_path)
    problem = Problem(spec, spec.shapes[:1], Space.from_spec(spec))
    recording = synthetic_recording(
        problem.space, ("big",), fails=lambda p: "compile_error" if p["VEC"] == 2 else None,
        registers=lambda p: 255 if p["BLOCK"] == 1024 else 32)  # 255 x 1024: too many
    events: list[Event] = []
    result = tune_parameters(problem, ReplayEvaluator(recording, H200_LIMITS), SearchOptions(
        strategy="exhaustive", budget=Budget(500), top_k=2, rounds=2), progress=events.append)
    begin = next(e for e in events if isinstance(e, Begin) and e.phase == "search")
    steps = [e for e in events if isinstance(e, Advance) and e.phase == "search"]
    measured = [e for e in result.evaluations if e.status != "infeasible"
                or e.registers is not None]  # pruned before compiling: not counted
    assert begin.total == len(measured) == steps[-1].done == len(steps)
    assert [s.done for s in steps] == list(range(1, len(steps) + 1))
    bests = [s.best_us for s in steps if s.best_us is not None]
    assert bests == sorted(bests, reverse=True) and bests[-1] == pytest.approx(
        min(e.objective for e in result.evaluations if e.objective is not None))
    phases = [(type(e).__name__, getattr(e, "phase", "")) for e in events
              if not isinstance(e, Advance)]
    assert phases == [("Begin", "search"), ("End", "search"), ("Begin", "re-test"),
                      ("End", "re-test")]
    retest = [e for e in events if isinstance(e, Advance) and e.phase == "re-test"]
    assert [e.done for e in retest][:2] == [1, 2]
