"""Tune with source moves end to end, without a GPU: calibration kernels (examples/moves/) with
no knobs of their own, their measurements played by the simulated backend from a synthetic base
recording with planted move effects, their profiles recorded ncu pages. Each test drives
`loop.run` and reads the rounds, the trace and the best kernel it wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pragma_ncu import loop
from pragma_ncu.conductor.rules import GENERIC
from pragma_ncu.measure.measurement import Status
from pragma_ncu.measure.traces import load_trace
from pragma_ncu.report.trace import render_html, render_markdown
from tests.tune_rig import run_moves


def test_readonly_and_unroll_are_searched_together_and_the_best_is_plain_source(
        tmp_path: Path) -> None:
    effects = {("PNCU_READONLY", 1): 0.55, ("PNCU_UNROLL", 4): 0.9, ("PNCU_UNROLL", 8): 0.93}
    done = {(("PNCU_READONLY", 1), ("PNCU_UNROLL", 4)): "bandwidth_ok"}
    st, ctx = run_moves(tmp_path, "frames_wsum", "fused_add_rmsnorm", effects, done)

    assert [r.action for r in st.records][:2] == ["baseline", "moves"]
    first = st.records[0].decision
    assert first.action == "moves" and [c.move for c in first.moves] == ["readonly", "unroll"]
    assert {c.finding for c in first.moves} == {"memory_latency"}
    moved = st.records[1]
    assert moved.space == {"PNCU_READONLY": [0, 1], "PNCU_UNROLL": [0, 1, 2, 4, 8]}
    assert moved.decision.accepted and st.best.params == {"PNCU_READONLY": 1, "PNCU_UNROLL": 4}
    trials = {t.move: t for t in moved.moves}
    assert trials["readonly"].taken and trials["unroll"].taken
    assert trials["readonly"].effect is not None and trials["readonly"].effect > 1.6
    assert trials["unroll"].effect is not None and 1.05 < trials["unroll"].effect < 1.2
    assert "+extern \"C\" __global__ void frames_wsum(float* out, const float* __restrict__ " \
        "frames, const float* __restrict__ w, int K," in trials["readonly"].diff
    assert "+    #pragma unroll 4" in trials["unroll"].diff
    # the profile of the new best calls for nothing more: below the target the generic moves
    # that fit come next (block_size here, which the simulated build drops), then a stop that
    # says what became of every fix the diagnosis named
    assert moved.decision.action == "moves" and moved.decision.reason.startswith(
        "apply the generic moves")
    assert {c.finding for r in st.records[1:-1] for c in r.decision.moves} == {GENERIC}
    assert st.records[-1].decision.action == "stop" and st.records[-1].decision.fixes
    summary = loop.summary(ctx, st)
    assert summary["moves_won"] == ["readonly", "unroll"] and summary["speedup"] > 1.8
    files = loop.write_best(ctx, st, tmp_path / "out")
    best = files["best kernel"].read_text()
    assert "PNCU_" not in best and "{%" not in best and "{{" not in best
    assert "// moves taken: readonly=1, unroll=4" in best
    assert "#pragma unroll 4\n    for (int k = 0; k < K; ++k)" in best
    assert "const float* __restrict__ frames" in best


def test_a_move_that_never_verifies_is_dropped_and_the_other_wins(tmp_path: Path) -> None:
    """gamma_lut's exact uint8 tolerance: fast math's rounding fails it at every point;
    coarsening the per-block table build is the win, with its grid recomputed."""
    effects: dict[tuple[str, Any], Any] = {
        ("PNCU_FAST_MATH", "use_fast_math"): Status.WRONG_ANSWER,
        ("PNCU_FAST_MATH", "ftz=true -prec-div=false -prec-sqrt=false"): Status.WRONG_ANSWER,
        ("PNCU_COARSEN", 8): 0.4, ("PNCU_COARSEN", 16): 0.42, ("PNCU_COARSEN", 4): 0.5}
    st, ctx = run_moves(tmp_path, "gamma_lut", "merge_attn_states_lse", effects,
                        {(("PNCU_COARSEN", 8), ("PNCU_FAST_MATH", "")): "bandwidth_ok"})

    moved = st.records[1]
    assert [c.move for c in st.records[0].decision.moves] == ["coarsen", "fast_math"]
    trials = {t.move: t for t in moved.moves}
    assert trials["fast_math"].status == "dropped"
    assert "no point with it verified (wrong_answer" in trials["fast_math"].reason
    assert trials["coarsen"].status == "searched" and trials["coarsen"].won == {
        "PNCU_COARSEN": 8}
    assert moved.decision.accepted and st.best.params["PNCU_COARSEN"] == 8
    best = loop.write_best(ctx, st, tmp_path / "out")["best kernel"].read_text()
    assert "grid ['ceil_div(ceil_div(n, 256), 8)']" in best
    assert "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; " in best
    assert "-use_fast_math" not in best.splitlines()[2]  # the flags line: fast math not taken


def test_a_move_that_does_not_compile_is_dropped_before_the_search(tmp_path: Path) -> None:
    st, _ = run_moves(tmp_path, "frames_wsum", "fused_add_rmsnorm",
                      {("PNCU_READONLY", 1): 0.6},
                      checks={("PNCU_UNROLL", 8): "k.cu(9): error: planted"})
    moved = st.records[1]
    trials = {t.move: t for t in moved.moves}
    assert trials["unroll"].status == "dropped"
    assert trials["unroll"].reason == ("it does not compile at {'PNCU_UNROLL': 8}: "
                                       "k.cu(9): error: planted")
    assert moved.space == {"PNCU_READONLY": [0, 1]}  # never searched
    assert trials["readonly"].taken and moved.decision.accepted


def test_the_trace_shows_each_move_its_finding_knobs_effect_and_diff(tmp_path: Path) -> None:
    effects = {("PNCU_READONLY", 1): 0.55, ("PNCU_UNROLL", 4): 0.9}
    st, ctx = run_moves(tmp_path, "frames_wsum", "fused_add_rmsnorm", effects)
    trace = load_trace(ctx.store, ctx.run_id)
    md = render_markdown(trace)
    assert "### Source moves" in md
    assert "| readonly | memory_latency | searched |" in md
    assert "PNCU_UNROLL ∈ {0, 1, 2, 4, 8}" in md and "PNCU_UNROLL=4 (taken)" in md
    assert "```diff" in md and "+    #pragma unroll 4" in md
    assert "source moves asked for:** readonly (for memory_latency)" in md
    html = render_html(trace)
    assert "<h3>Source moves</h3>" in html and "const float* __restrict__ frames" in html
