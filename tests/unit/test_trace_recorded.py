"""The traces committed from H200 runs of `tools/gpu_tune_loop_check.sh` and
`tools/gpu_roofline_check.sh`, and from the moves check (`tools/gpu_moves_check.sh`: on H100s
for issue 26, `*-moves.h100`; on H200s for issue 34's structural moves, `*-structural.h200`)
(docs/traces/): they parse as round records, every decision states metric values and cites
compendium entries, and re-rendering them gives the committed markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pragma_ncu.infra.store import RunRow
from pragma_ncu.measure.records import RoundRecord
from pragma_ncu.measure.traces import Trace
from pragma_ncu.report.trace import render_markdown

TRACES = Path(__file__).resolve().parents[2] / "docs" / "traces"
STRUCTURAL_RUNS = sorted(TRACES.glob("*-structural.h200.json"))  # issue 34, on H200s
RUNS = sorted(set(TRACES.glob("*.h200.json")) - set(STRUCTURAL_RUNS))
MOVES_RUNS = sorted(TRACES.glob("*-moves.h100.json"))  # tools/gpu_moves_check.sh, on H100s


def _load(path: Path) -> tuple[dict, list[RoundRecord]]:
    data = json.loads(path.read_text())
    return data["run"], [RoundRecord.from_json(r) for r in data["rounds"]]


def test_the_five_runs_are_committed() -> None:
    assert [p.name.split(".")[0] for p in RUNS] == [
        "fused_add_rmsnorm-template", "merge_attn_states_lse-template",
        "poly_eval-roofline", "silu_and_mul-naive-llm-replay", "silu_and_mul-template"]


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_every_decision_states_values_and_cites_entries(path: Path) -> None:
    run, rounds = _load(path)
    assert run["status"] == "done" and rounds[-1].decision.action == "stop"
    for r in rounds:
        assert r.decision.reason
        assert any(b.values for b in r.decision.analysis), r.round
        assert r.decision.citations, r.round
        assert RoundRecord.from_json(r.to_json()) == r


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_the_best_only_improves_and_is_verified(path: Path) -> None:
    _, rounds = _load(path)
    objectives = [r.best_after.objective_us for r in rounds if r.best_after]
    assert all(b <= a for a, b in zip(objectives, objectives[1:], strict=False))
    for r in rounds[1:]:
        if r.decision.accepted:
            assert r.candidate is not None and r.candidate.verified
            assert r.best_after == r.candidate


def test_the_llm_round_rewrote_and_won() -> None:
    _, rounds = _load(TRACES / "silu_and_mul-naive-llm-replay.h200.json")
    rewrite = rounds[-1]
    assert rewrite.action == "rewrite" and rewrite.variant["origin"] == "llm"
    assert rewrite.decision.accepted and [c.outcome for c in rewrite.llm_calls] == ["ok"]
    assert set(rewrite.space) == {"BLOCK", "VEC"}


@pytest.mark.parametrize("path", RUNS + MOVES_RUNS + STRUCTURAL_RUNS, ids=lambda p: p.name)
def test_rerendering_gives_the_committed_markdown(path: Path) -> None:
    run, rounds = _load(path)
    trace = Trace(RunRow(**run), tuple(rounds))
    assert render_markdown(trace) == path.with_suffix(".md").read_text()



def test_the_moves_traces_are_committed() -> None:
    assert [p.name.split(".")[0] for p in MOVES_RUNS] == [
        "axpby_fixed_grid-moves", "chain_autocov-moves", "colsum_rows-moves",
        "frames_wsum-moves", "gamma_lut-moves"]


@pytest.mark.parametrize("path", MOVES_RUNS + STRUCTURAL_RUNS, ids=lambda p: p.name)
def test_a_moves_trace_shows_each_move_with_its_finding_knobs_and_effect(path: Path) -> None:
    """Issue 26: for each move the finding that called for it, the knob values searched, the
    winner's values and the measured effect; the source diff where the move edits the source
    (a flag or launch knob has none)."""
    _, rounds = _load(path)
    trials = [t for r in rounds if r.action == "moves" for t in r.moves]
    called = {c.move: c.finding for r in rounds for c in r.decision.moves}
    assert trials and all(t.finding == called[t.move] for t in trials)
    for t in (t for t in trials if t.status == "searched"):
        assert t.knobs and set(t.won) == set(t.knobs) and t.effect is not None
        assert t.diff or t.move in ("fast_math", "cache_policy", "block_size", "grid_size")
    assert any(t.taken for t in trials)


def test_some_moves_trace_took_several_moves() -> None:
    """Issue 26 asks for a trace of one multi-move run (frames_wsum, gamma_lut, axpby)."""
    taken = {p.name.split(".")[0]: sum(t.taken for _, rounds in [_load(p)] for r in rounds
                                       if r.action == "moves" for t in r.moves)
             for p in MOVES_RUNS}
    assert sum(n >= 2 for n in taken.values()) >= 3, taken


def test_every_structural_move_has_a_committed_trace_where_it_won() -> None:
    """Issue 34: one trace (md + html) per new move, each from a run in which it was taken."""
    won: dict[str, str] = {}
    for path in STRUCTURAL_RUNS:
        assert path.with_suffix(".md").is_file() and path.with_suffix(".html").is_file()
        for r in _load(path)[1]:
            for t in r.moves:
                if t.taken:
                    won.setdefault(t.move, path.name.split("-structural")[0])
    new = ("row_team", "vectorize", "vectorize_loops", "coalesce", "smem_tile", "block_reduce",
           "block_columns")
    assert all(m in won for m in new), won
