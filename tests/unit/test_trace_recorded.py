"""The traces committed from H200 runs of `tools/gpu_tune_loop_check.sh` and
`tools/gpu_roofline_check.sh` (docs/traces/): they
parse as round records, every decision states metric values and cites compendium entries, and
re-rendering them gives the committed markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pragma_ncu.infra.store import RunRow
from pragma_ncu.measure.records import RoundRecord
from pragma_ncu.measure.traces import Trace
from pragma_ncu.report.trace import render_markdown

TRACES = Path(__file__).resolve().parents[2] / "docs" / "traces"
RUNS = sorted(TRACES.glob("*.h200.json"))


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


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_rerendering_gives_the_committed_markdown(path: Path) -> None:
    run, rounds = _load(path)
    trace = Trace(RunRow(**run), tuple(rounds))
    assert render_markdown(trace) == path.with_suffix(".md").read_text()
