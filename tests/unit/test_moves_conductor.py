"""The conductor choosing source moves from recorded profiles: the corpus kernels' ncu pages
(tests/fixtures/corpus/ours, recorded on an H200) diagnosed, their sources read by the moves,
and `decide` asked what comes next, as the tune loop would after round 0 or a later round."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest

from pragma_ncu.backends import diagnose_in
from pragma_ncu.conductor.rules import GENERIC, GENERIC_MOVES, MOVE_MIN_SCORE, called_moves, decide
from pragma_ncu.conductor.situation import MoveOption, Policy, Situation
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.measure.records import Decision, MoveChoice, RangeChange
from pragma_ncu.profile.profiles import profile_from_json
from pragma_ncu.spec.file import load_spec
from pragma_ncu.spec.model import TaskSpec
from tests.corpus_eval import knowledge
from tests.corpus_moves import baseline, moves_of, read, situation

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("kernel", "moves"), [
    ("smem_transpose", ["smem_pad"]),  # 32-way conflicts on the column reads of the tile
    ("smem_bcast_conflict", ["smem_pad"]),
    ("dependent_rows", ["unroll"]),  # one load in flight per warp: memory latency
    ("half_rows", ["unroll"]),
    ("l2_reread", ["cache_policy"]),  # L2-bound re-reads, no shared memory
])
def test_the_top_findings_call_for_the_moves_that_fit(kernel: str, moves: list[str]) -> None:
    """The top finding's moves come first; a lower finding (a tenth of the time or more) may
    add its own after them."""
    d = decide(situation(kernel), Policy(), knowledge())
    assert d.action == "moves", d.reason
    assert [c.move for c in d.moves][:len(moves)] == moves
    findings = read(kernel)[0].findings
    assert d.moves[0].finding == findings[0].bottleneck
    assert all(c.finding in {f.bottleneck for f in findings[:3] if f.score >= MOVE_MIN_SCORE}
               for c in d.moves)
    assert d.reason.startswith("apply the source moves the profile calls for")


@pytest.mark.parametrize(("kernel", "why"), [
    ("copy_half", "at the roofline: its latency finding accounts for too little"),
    ("int_hash", "compute-bound on ALU work it needs: no precise function, no setup"),
    ("sincos_chain", "SFU-bound on __sinf/__cosf already: fast math would change nothing"),
    ("tail_waves", "a tail effect: no move answers it"),
    ("spill_arrays", "spills: no move answers them (its latency finding is 3%)"),
])
def test_no_move_is_called_for_where_none_answers_the_cause(kernel: str, why: str) -> None:
    d = decide(situation(kernel), Policy(), knowledge())
    assert d.action == "stop" and not d.moves, (why, d.reason)
    assert "no parameter move or source move" in d.reason


def test_a_register_limited_walk_gets_the_register_cap_then_launch_bounds() -> None:
    first = decide(situation("regs_chase"), Policy(), knowledge())
    assert first.action == "retune" and first.retune[0].param == "MAXRREG"
    after = decide(situation("regs_chase", 1, (first,)), Policy(), knowledge())
    assert after.action == "moves"
    assert [c.move for c in after.moves] == ["launch_bounds", "unroll"]
    assert [c.finding for c in after.moves] == ["occupancy_registers", "memory_latency"]


def test_each_move_is_tried_once_then_the_generic_ones_and_the_run_stops_explained() -> None:
    """After the moves the findings call for, below the target: the generic moves that fit,
    each once, then a stop that says what became of each fix the diagnosis named."""
    history: tuple[Decision, ...] = (decide(situation("dependent_rows"), Policy(),
                                            knowledge()),)
    called = [c.move for c in history[0].moves]
    generic: list[str] = []
    for number in range(1, 8):
        d = decide(situation("dependent_rows", number, history), Policy(max_rounds=10),
                   knowledge())
        if d.action == "stop":
            break
        assert d.action == "moves" and {c.finding for c in d.moves} == {GENERIC}, d.reason
        assert "the generic moves not tried yet" in d.reason
        generic += [c.move for c in d.moves]
        history += (d,)
    assert d.action == "stop" and "no parameter move or source move" in d.reason
    fits = {m.name for m in read("dependent_rows")[1] if m.applies}
    assert generic == [m for m in GENERIC_MOVES if m in fits and m not in called]
    assert d.fixes and d.fixes[0].startswith(read("dependent_rows")[0].findings[0].title)
    assert "unroll" in d.fixes[0]  # the move the top finding called for, and its fate


def test_the_generic_moves_wait_for_the_target_and_for_the_called_ones() -> None:
    first = decide(situation("dependent_rows"), Policy(), knowledge())
    at = decide(situation("dependent_rows", 1, (first,), fraction=0.95), Policy(), knowledge())
    assert at.action == "stop" and not at.fixes  # at the target: nothing to explain


def test_moves_rounds_do_not_spend_patience_while_moves_are_left() -> None:
    """A declared-knob search and a moves round, neither accepted: patience (2) would stop the
    run, but the moves round does not count; once every called-for move was tried it stops."""
    tune = Decision(0, "tune", "")
    cap = Decision(1, "retune", "", retune=(RangeChange("MAXRREG", (), (0, 32, 64, 128), ""),))
    moves = Decision(2, "moves", "", moves=(MoveChoice("unroll", "memory_latency", ""),))
    s = situation("regs_chase", 3, (tune, cap, moves))  # rounds 1 and 2 gained nothing
    assert called_moves(s)  # launch_bounds is left (unroll was tried)
    d = decide(s, Policy(patience=2), knowledge())
    assert d.action == "moves" and [c.move for c in d.moves] == ["launch_bounds"]
    generic = Decision(3, "moves", "", moves=tuple(MoveChoice(m, GENERIC, "")
                                                   for m in GENERIC_MOVES))
    s = situation("dependent_rows", 4, (tune, cap, moves, generic))  # nothing left to try
    d = decide(s, Policy(patience=2), knowledge())
    assert d.action == "stop" and "without a verified" in d.reason


def test_with_an_llm_the_moves_come_before_the_rewrite() -> None:
    far = situation("dependent_rows", 1, (Decision(0, "tune", ""),), fraction=0.15)
    d = decide(far, Policy(llm=True), knowledge())
    assert d.action == "moves", d.reason
    moved = situation("dependent_rows", 2, (Decision(0, "tune", ""), replace(d, round=1)),
                      fraction=0.15)
    assert decide(moved, Policy(llm=True), knowledge()).action == "rewrite"


def test_a_failed_moves_round_is_not_sent_to_the_coder_for_repair() -> None:
    moves = Decision(1, "moves", "", moves=(MoveChoice("unroll", "memory_latency", ""),))
    s = replace(situation("dependent_rows", 2, (Decision(0, "tune", ""), moves),
                          fraction=0.15), candidate=None, failure="verification",
                failure_text="wrong_answer at odd")
    d = decide(s, Policy(llm=True), knowledge())
    assert d.action == "rewrite" and d.route == "designer"


def test_findings_below_a_tenth_of_the_time_call_for_nothing() -> None:
    diagnosis, _, _ = read("copy_half")
    small = [f for f in diagnosis.findings if f.score < MOVE_MIN_SCORE]
    assert small and small[0].bottleneck == "memory_latency"  # recorded: 7% of the time
    lifted = replace(situation("copy_half"), diagnosis=replace(
        diagnosis, findings=tuple(replace(f, score=0.3) for f in diagnosis.findings)))
    assert [c.move for c in called_moves(lifted)] == ["unroll"]


def test_dram_traffic_below_the_roofline_calls_for_more_bytes_in_flight() -> None:
    """copy_few_blocks moves its bytes at 43% of the copy ceiling: after the grid's moves, its
    memory-bandwidth finding (46% of the time) reads as exposed latency, so the moves that put
    more bytes in flight come too, each naming the finding and the reading."""
    d = decide(situation("copy_few_blocks"), Policy(), knowledge())
    assert d.action == "moves", d.reason
    assert [c.move for c in d.moves] == ["block_size", "grid_size", "readonly", "unroll"]
    latency = [c for c in d.moves if c.move in ("readonly", "unroll")]
    assert all(c.finding == "memory_bandwidth" for c in latency)
    assert all("below the roofline reads as memory_latency" in c.why for c in latency)


def test_dram_traffic_at_the_roofline_calls_for_nothing_the_same_kernel_below_it_would() -> None:
    """copy_half is at the roofline (99% of the copy ceiling): no move, although unroll fits
    its loop. The same findings with the diagnosis saying "below the roofline" call unroll."""
    diagnosis, _, _ = read("copy_half")
    assert diagnosis.roofline.at_roofline
    assert decide(situation("copy_half"), Policy(), knowledge()).action == "stop"
    below = replace(situation("copy_half"), diagnosis=replace(
        diagnosis, roofline=replace(diagnosis.roofline, at_roofline=False)))
    assert [(c.move, c.finding) for c in called_moves(below)] == [("unroll", "memory_bandwidth")]


def test_a_round_takes_the_moves_its_budget_can_search_and_the_rest_wait() -> None:
    """unroll (5 values), readonly (2) and fast_math (3) all called for: a budget of 12
    points takes the first two (10 points); fast_math waits for the next round."""
    s = situation("dependent_rows")
    options = tuple(MoveOption(n, ("memory_latency",), "", True, "", points) for n, points in
                    (("unroll", 5), ("readonly", 2), ("fast_math", 3)))
    s = replace(s, moves=options)
    d = decide(s, Policy(move_points=12), knowledge())
    assert [c.move for c in d.moves] == ["unroll", "readonly"]
    later = replace(s, round=1, history=(d,), best_before=s.best, candidate=s.best)
    assert [c.move for c in decide(later, Policy(move_points=12), knowledge()).moves] == \
        ["fast_math"]
    # the first always, even over the budget; then what still fits (2 x 2 > 4: none)
    assert [c.move for c in decide(s, Policy(move_points=4), knowledge()).moves] == ["unroll"]


def recorded(kernel: str) -> tuple[Diagnosis, TaskSpec, tuple[MoveOption, ...]]:
    """A calibration kernel's round-0 profile as recorded on an H100
    (tests/fixtures/moves/KERNEL-h100.profile.json.gz), diagnosed, and the moves read against
    its source."""
    data = json.loads(gzip.decompress(
        (ROOT / "tests" / "fixtures" / "moves" / f"{kernel}-h100.profile.json.gz").read_bytes()))
    profile = profile_from_json(data)
    diagnosis = diagnose_in(profile, profile.kernels[0], knowledge())
    spec = load_spec(ROOT / "examples" / "moves" / f"{kernel}.toml")
    return diagnosis, spec, moves_of(spec, diagnosis, None)


def test_bank_conflicts_on_a_1d_table_call_for_no_pad_and_the_setup_is_coarsened() -> None:
    """codebook_quant as recorded on an H100 (2026-11-26, round 0 of tools/gpu_moves_check.sh):
    its binary search over a 256-entry shared table conflicts (the top finding). smem_pad
    refuses a 1-D array (a skew of the index, tried, removed the conflicts and was 7% slower:
    docs/tune.md), so the first move is coarsen, for the per-block table setup."""
    diagnosis, spec, options = recorded("codebook_quant")
    assert diagnosis.findings[0].bottleneck == "shared_bank_conflicts"
    pad = next(o for o in options if o.name == "smem_pad")
    assert not pad.applies and "two or more dimensions" in pad.reason
    s = Situation(0, baseline(0.5), None, None, False, "", None, diagnosis, spec.params,
                  moves=options)
    d = decide(s, Policy(move_points=24), knowledge())
    assert d.action == "moves", d.reason
    assert [(c.move, c.finding) for c in d.moves] == [("coarsen", "latency_bound")]


def test_a_small_grid_of_one_thread_per_output_calls_for_splitting_its_loop() -> None:
    """colsum_rows as recorded on an H100 (2026-11-26, round 0 of tools/gpu_moves_check.sh):
    64 blocks for 132 SMs (small_grid first). A smaller block makes more blocks of the same
    16,384 threads; splitting each column's loop over threads makes more threads, so
    split_reduction comes first, and block_size is left for a later round (5 x 5 points would
    outgrow a budget of 24; beside split it could not hold anyway, split sizing its slots by
    the block)."""
    diagnosis, spec, options = recorded("colsum_rows")
    assert diagnosis.findings[0].bottleneck == "small_grid"
    s = Situation(0, baseline(0.53), None, None, False, "", None, diagnosis, spec.params,
                  moves=options)
    d = decide(s, Policy(move_points=24), knowledge())
    assert d.action == "moves", d.reason
    assert [(c.move, c.finding) for c in d.moves] == [("split_reduction", "small_grid")]
    later = replace(s, round=1, history=(d,))
    again = decide(later, Policy(move_points=24), knowledge())
    assert ("block_size", "small_grid") in [(c.move, c.finding) for c in again.moves]
