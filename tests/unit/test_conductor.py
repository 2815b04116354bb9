"""The conductor in isolation: the acceptance rule on synthetic re-tests, and the decision rules
on hand-made Situations over real diagnoses (recorded ncu profiles + the compendium)."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pragma_ncu.conductor import analysis as explain
from pragma_ncu.conductor import ranges
from pragma_ncu.conductor.accept import accept
from pragma_ncu.conductor.rules import REGISTER_CAP, REGISTER_CAPS, decide
from pragma_ncu.conductor.situation import Policy
from pragma_ncu.measure.records import Decision, RangeChange
from pragma_ncu.search.compare import compare
from pragma_ncu.search.results import FASTER, Retest, ShapeTime
from pragma_ncu.spec.model import Param
from tests.fakes.moves import spec_of
from tests.fakes.timings import Noise
from tests.fakes.timings import retest as timed
from tests.fakes.tuner import H200_LIMITS
from tests.situations import BLOCK, VEC, diagnosis, kernel, situation

# --- F: the acceptance rule ----------------------------------------------------------------


def retest(times: dict[str, tuple[float, float]], *, status: str = "ok",
           incumbent: bool = False, point: dict[str, Any] | None = None) -> Retest:
    """A re-test from {shape: (median µs, noise µs)}."""
    shapes = tuple(ShapeTime(s, med, noise, (med,) * 3) for s, (med, noise) in times.items())
    default: dict[str, Any] = {"BLOCK": 256 if incumbent else 512}
    return Retest(point or default, status,
                  "" if status == "ok" else "planted failure", shapes, incumbent)


BEST = retest({"a": (100.0, 2.0)}, incumbent=True)
QUIET = Noise(spread=0.02, round_sigma=0.002)


@pytest.mark.parametrize(("cand_us", "accepted"), [(99.5, False), (100.0, False), (96.0, True),
                                                    (90.0, True), (120.0, False)])
def test_accepted_only_when_the_timings_show_it_faster(cand_us: float, accepted: bool) -> None:
    """Side by side with a quiet best (2% spread): a gain within the 1% margin is not taken,
    a 4% one is, and so is nothing slower."""
    best = timed({"a": 100.0}, QUIET, seed=1, incumbent=True, rounds=6)
    cand = timed({"a": cand_us}, QUIET, seed=2, rounds=6)
    got = accept(best, cand, verified_everywhere=True)
    assert got.accepted is accepted, got.reason
    assert got.outcome == ("accepted" if accepted else "rejected")
    assert got.speedup == pytest.approx(best.objective / cand.objective)  # type: ignore[operator]
    if accepted:
        assert got.interval is not None and got.interval[0] > 1.01


def test_the_candidates_own_noise_counts_too() -> None:
    """A quiet best and a candidate 5% faster whose own rounds jump by 20%: not accepted."""
    best = timed({"a": 100.0}, QUIET, seed=3, incumbent=True)
    steady = timed({"a": 95.0}, QUIET, seed=4)
    jumpy = timed({"a": 95.0}, Noise(spread=0.02, round_sigma=0.2), seed=4)
    assert accept(best, steady, True).accepted
    got = accept(best, jumpy, True)
    assert not got.accepted and got.outcome == "undecided" and "too noisy" in got.reason


def test_unverified_or_failed_candidates_are_never_accepted() -> None:
    fast = {"a": (10.0, 0.1)}
    not_everywhere = accept(BEST, retest(fast), verified_everywhere=False)
    assert not not_everywhere.accepted and "verification" in not_everywhere.reason
    for status in ("wrong_answer", "timeout", "runtime_error", "not_verified"):
        got = accept(BEST, retest(fast, status=status), verified_everywhere=True)
        assert not got.accepted and status in got.reason
    assert not accept(BEST, None, True).accepted


def test_a_verified_candidate_replaces_a_best_that_fails_its_retest() -> None:
    broken = retest({}, status="wrong_answer", incumbent=True)
    got = accept(broken, retest({"a": (120.0, 1.0)}), True)
    assert got.accepted and "failed its re-test" in got.reason


def test_acceptance_property_over_random_retests() -> None:
    """Verification gates everything; among verified candidates the rule of `search.compare`
    (tested on its own in test_acceptance.py) is what `accept` applies."""
    rng = random.Random(6)
    accepted = rejected = 0
    for i in range(300):
        shapes = {f"s{j}": rng.uniform(5, 2000) for j in range(rng.randint(1, 3))}
        noise = Noise(spread=rng.uniform(0.005, 0.1), round_sigma=rng.uniform(0, 0.01))
        gain = rng.uniform(0.6, 1.3)
        best = timed(shapes, noise, seed=2 * i, incumbent=True, reps=60)
        cand = timed({k: v * gain for k, v in shapes.items()}, noise, seed=2 * i + 1, reps=60)
        verified = rng.random() < 0.8
        status = "ok" if rng.random() < 0.8 else "wrong_answer"
        cand = replace(cand, status=status)
        got = accept(best, cand, verified)
        if not verified or status != "ok":
            assert not got.accepted
            continue
        assert got.accepted is (compare(best, cand).outcome == FASTER), got.reason
        if gain >= 0.99:
            assert not got.accepted, (gain, noise, got.reason)
        accepted += got.accepted
        rejected += not got.accepted
    assert accepted > 30 and rejected > 30  # both sides of the rule were exercised


# --- G: the decision rules -----------------------------------------------------------------


CAP = Param("MAXRREG", 0, (0, 64), flag="-maxrregcount={}")


def test_round_zero_searches_the_declared_knobs() -> None:
    d = decide(situation(round_=0, accepted=False, history=()), Policy())
    assert d.action == "tune" and "BLOCK, VEC" in d.reason
    assert d.citations and all(c.entry for c in d.citations)
    cited = {c.entry for c in d.citations}
    bullets = [b for b in d.analysis if b.cites]
    assert bullets and all(b.values for b in bullets) and set(bullets[0].cites) <= cited


@pytest.mark.parametrize(("fraction", "action"), [(0.97, "stop"), (0.90, "stop"),
                                                  (0.89, "rewrite"), (0.75, "rewrite")])
def test_stop_at_the_target_fraction(fraction: float, action: str) -> None:
    d = decide(situation(best=kernel(fraction=fraction)), Policy(llm=True))
    assert d.action == action, d.reason
    if action == "stop":
        assert f"{100 * fraction:.1f}%" in d.reason and "ceiling" in d.reason


@pytest.mark.parametrize(("accepted_before", "patience", "action"),
                         [(False, 2, "stop"), (True, 2, "rewrite"), (False, 3, "rewrite")])
def test_stop_after_patience_rounds_without_gain(accepted_before: bool, patience: int,
                                                 action: str) -> None:
    history = (Decision(0, "tune", ""), Decision(1, "retune", "", accepted=accepted_before))
    s = situation(round_=2, best=kernel(2, fraction=0.8), accepted=False, history=history)
    d = decide(s, Policy(llm=True, patience=patience))
    assert d.action == action, d.reason
    if action == "stop":
        assert "2 rounds in a row" in d.reason and d.llm_note == ""  # the LLM is there


def test_round_budget_stops_even_a_failed_round() -> None:
    s = situation(round_=5, failure="verification", failure_text="wrong_answer at odd",
                  accepted=False)
    d = decide(s, Policy(llm=True, max_rounds=5))
    assert d.action == "stop" and "budget" in d.reason


# What the device and the spec allow beyond BLOCK's range (conductor.ranges.reach): a block of
# 1024 threads at most.
BLOCK_REACH = {"BLOCK": (1, 2, 4, 8, 16, 32)}


@pytest.mark.parametrize(("best_block", "new"), [(1024, None),
                                                 (64, (1, 2, 4, 8, 16, 32, 64, 128, 256))])
def test_retune_extends_a_range_at_its_edge_as_far_as_allowed_in_one_round(
        best_block: int, new: tuple[int, ...] | None) -> None:
    """At the bottom, every power of two below the best that the device allows, in one round
    (a naive layer norm spent five rounds halving its block one step a round); at the top of a
    block size the device caps at 1024 threads, nothing is left to try."""
    s = replace(situation(best=kernel(fraction=0.8, BLOCK=best_block, VEC=4)), reach=BLOCK_REACH)
    d = decide(s, Policy())
    if new is None:
        assert d.action == "stop" and not d.retune, d.reason
        return
    assert d.action == "retune", d.reason
    assert d.retune == (RangeChange("BLOCK", BLOCK.values, new, d.retune[0].why),)
    assert f"BLOCK={best_block}" in d.reason and "try 1, 2, 4, 8, 16, 32 " in d.reason
    # once extended downwards it is not extended that way again, even from a new bottom
    tried = (*s.history, Decision(1, "retune", "", retune=d.retune))
    wider = Param("BLOCK", 4, (4, 8, 16, 32, 64, 128, 256))  # (1 and 2 failed to build)
    again = decide(replace(s, round=2, history=tried, accepted=True, params=(wider, VEC),
                           best=kernel(2, fraction=0.8, BLOCK=4, VEC=4)), Policy())
    assert again.action == "stop" and not again.retune


def test_a_range_extended_one_way_may_still_be_extended_the_other() -> None:
    s = replace(situation(best=kernel(fraction=0.8, BLOCK=64, VEC=4)), reach=BLOCK_REACH)
    down = decide(s, Policy()).retune
    rows = Param("ROWS", 1, (1, 2, 4))
    tried = (*s.history, Decision(1, "retune", "", retune=down))
    up = decide(replace(s, round=2, history=tried, params=(BLOCK, VEC, rows),
                        best=kernel(2, fraction=0.8, BLOCK=256, VEC=4, ROWS=4),
                        reach={**BLOCK_REACH, "ROWS": (8, 16, 32)}), Policy())
    assert [(c.param, c.new) for c in up.retune] == [("ROWS", (1, 2, 4, 8, 16, 32))]


def test_without_known_limits_a_knob_goes_up_to_eight_times_its_top() -> None:
    """A hand-made situation knows no device: every power of two up to 8x the range's top (a
    real run's reach is the device's and the spec's, `test_reach_...` below)."""
    rows = Param("ROWS", 1, (1, 2, 4))
    s = situation(best=kernel(fraction=0.8, ROWS=4), params=(BLOCK, VEC, rows))
    (change,) = decide(s, Policy()).retune
    assert change.new == (1, 2, 4, 8, 16, 32)


def test_reach_is_what_the_device_and_the_restrictions_allow(tmp_path: Path) -> None:
    """The block size goes up to the device's 1024 threads, another knob to 8x its top, each
    only as far as the spec's restrictions allow at every shape."""
    params = {"BLOCK": {"default": 64, "values": [64, 128]},
              "VEC": {"default": 1, "values": [1, 2, 4]}}
    spec = spec_of(tmp_path, "__global__ void k(float* y, const float* x, int n) {}\n",
                   grid=("ceil_div(n, BLOCK * VEC)",), block=("BLOCK",), params=params)
    got = ranges.reach(spec, {"BLOCK": 128, "VEC": 4}, spec.shapes, H200_LIMITS)
    assert got == {"BLOCK": (1, 2, 4, 8, 16, 32, 256, 512, 1024),
                   "VEC": (8, 16, 32)}
    limited = replace(spec, restrictions=("BLOCK * VEC <= 2048",))
    got = ranges.reach(limited, {"BLOCK": 128, "VEC": 4}, spec.shapes, H200_LIMITS)
    assert got == {"BLOCK": (1, 2, 4, 8, 16, 32, 256, 512), "VEC": (8, 16)}


def test_no_edge_move_inside_a_range_or_for_non_powers_of_two() -> None:
    odd = Param("ROWS", 3, (3, 5, 7))
    s = situation(best=kernel(fraction=0.8, BLOCK=256, VEC=4, ROWS=7), params=(BLOCK, VEC, odd))
    assert decide(s, Policy()).retune == ()


def test_no_edge_move_for_a_source_moves_knob() -> None:
    """block_size's PNCU_BLOCK won at 1024, the top of the range its move chose from the
    hardware's limit: a retune to 2048 would spend a round on points outside the GPU's limits
    (seen on an H100, 2026-11-26); the user's own BLOCK at its edge still is extended."""
    moved = Param("PNCU_BLOCK", 256, (256, 64, 128, 512, 1024))
    s = situation(best=kernel(fraction=0.8, BLOCK=256, VEC=4, PNCU_BLOCK=1024),
                  params=(BLOCK, VEC, moved))
    assert all(c.param != "PNCU_BLOCK" for c in decide(s, Policy()).retune)


def test_register_cap_move_when_registers_limit_occupancy() -> None:
    s = situation(best=kernel(fraction=0.8), profile="register_pressure")
    assert diagnosis("register_pressure").findings[0].bottleneck == "occupancy_registers"
    d = decide(s, Policy())
    assert d.action == "retune", d.reason
    assert [(c.param, c.old, c.new) for c in d.retune] == [(REGISTER_CAP, (), REGISTER_CAPS)]
    # a kernel that has its own register-cap knob gets no second one
    capped = decide(replace(s, params=(BLOCK, VEC, CAP)), Policy())
    assert all(c.param != REGISTER_CAP for c in capped.retune)
    # and a profile without the finding gets none
    assert decide(situation(best=kernel(fraction=0.8)), Policy()).action != "retune"


def test_llm_rewrite_when_far_below_the_roofline_after_the_first_search() -> None:
    s = situation(best=kernel(fraction=0.5, BLOCK=1024))  # an edge move exists, too
    d = decide(s, Policy(llm=True))
    assert (d.action, d.route) == ("rewrite", "designer")
    assert "50.0%" in d.reason
    diag = diagnosis("silu_and_mul")
    assert d.guidance and d.guidance == explain.guidance(diag)
    top = diag.findings[0]
    assert d.guidance[0] == f"{top.actions[0]} (for {top.bottleneck})"
    assert decide(s, Policy(llm=False)).action == "retune"  # knob moves first without an LLM
    assert decide(replace(s, round=0), Policy(llm=True)).action == "tune"


@pytest.mark.parametrize("why", ["exhausted", "patience"])
def test_stop_without_llm_says_what_a_rewrite_would_try(why: str) -> None:
    if why == "exhausted":
        s = situation(best=kernel(fraction=0.5))
    else:
        history = (Decision(0, "tune", ""), Decision(1, "retune", ""))
        s = situation(round_=2, best=kernel(2, fraction=0.5), accepted=False, history=history)
    d = decide(s, Policy())
    assert d.action == "stop", d.reason
    assert d.llm_note.startswith("With an LLM configured, a rewrite round would try: ")
    assert all(g in d.llm_note for g in explain.guidance(diagnosis("silu_and_mul")))


def test_repair_goes_to_the_coder_then_escalates_to_the_designer() -> None:
    failure = "wrong_answer at BLOCK=256, VEC=8: odd: max rel error 0.41"
    first = situation(round_=2, failure="verification", failure_text=failure, accepted=False)
    d = decide(first, Policy(llm=True, max_repairs=2))
    assert (d.action, d.route, d.guidance) == ("repair", "coder", (failure,))
    repaired = (*first.history, d)
    second = decide(replace(first, round=3, history=repaired), Policy(llm=True, max_repairs=2))
    assert (second.action, second.route) == ("repair", "coder")
    third = decide(replace(first, round=4, history=(*repaired, second)),
                   Policy(llm=True, max_repairs=2, max_rounds=8))
    assert (third.action, third.route) == ("rewrite", "designer")
    assert "3 failed rounds in a row" in third.reason and third.guidance
    # a coder that produced nothing is a design problem at once
    nothing = decide(replace(first, failure="coder", failure_text="no usable variant"),
                     Policy(llm=True))
    assert (nothing.action, nothing.route) == ("rewrite", "designer")
    # without an LLM nothing can repair: the failed variant is dropped, other moves follow
    alone = decide(first, Policy(llm=False))
    assert alone.action != "repair" and not alone.route


def test_decisions_cite_the_compendium_with_metric_values() -> None:
    d = decide(situation(best=kernel(fraction=0.5)), Policy(llm=True))
    assert d.citations
    by_entry = {c.entry: c for c in d.citations}
    assert all(c.title and c.meaning for c in d.citations)
    finding = next(b for b in d.analysis if "[memory_latency" in b.text)
    assert finding.values and set(finding.cites) <= set(by_entry)
    for value in finding.values.values():
        assert any(ch.isdigit() for ch in value)
    roofline = next(b for b in d.analysis if "attainable roofline" in b.text)
    assert "set by the measured copy ceiling" in roofline.text
    assert roofline.values["roofline fraction"] == "50.0%"
    assert not math.isnan(d.speedup_vs_best or 0.0)
