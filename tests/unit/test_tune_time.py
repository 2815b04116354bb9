"""A tune run's time (`--max-time`, pragma_ncu/loop/budget.py), on the simulated backend's
clock: a round's cost estimated from the rounds so far, each round's search given its share of
what is left, the conductor stopping with the figures when another round does not fit, and a
long launch re-tested in fewer rounds and candidates (not searched less)."""

from __future__ import annotations

import tomllib
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
import pytest

from pragma_ncu import api, loop
from pragma_ncu.cli.tune_cmd import MaxTime
from pragma_ncu.conductor.rules import decide
from pragma_ncu.conductor.situation import Policy
from pragma_ncu.infra.errors import InputError
from pragma_ncu.infra.store import Store
from pragma_ncu.loop import budget
from pragma_ncu.loop.context import Context, RunPlan, State
from pragma_ncu.measure.records import Decision, KernelState, RoundRecord
from pragma_ncu.report.trace import search_line
from pragma_ncu.search.evaluator import RETEST
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Budget, Evaluation
from pragma_ncu.spec.file import load_spec
from tests.fakes.tune import SimBackend, SimEvaluator, load_profile, text_hash
from tests.fakes.tuner import measurement
from tests.situations import situation
from tests.tune_rig import compendium

ROOT = Path(__file__).resolve().parents[2]
MOVES = ROOT / "examples" / "moves"
SEARCH = SearchOptions(strategy="auto", budget=Budget(evaluations=200), top_k=5, rounds=2)


def record(n: int, wall: float, phases: dict[str, float], evaluated: int = 0,
           us: float = 100.0) -> RoundRecord:
    best = KernelState(n, "v", "k", "h", {}, {"main": us}, {"main": 1.0}, us, True)
    return RoundRecord(n, "baseline" if n == 0 else "moves", {}, {},
                       {"evaluated": evaluated} if evaluated else {}, None, best, best,
                       Decision(n, "", ""), wall_s=wall, phases=phases)


def test_a_rounds_cost_is_modelled_on_the_baseline_then_measured() -> None:
    base = record(0, 12.0, {"retest": 3.0, "check": 0.5, "profile": 8.0})
    cost = budget.round_cost([base], SEARCH, side_rounds=3)
    # one entrant round 1 s: the search's re-test (5 + 2 entrants, 2 rounds) and the side
    # by side (2 entrants, 3 rounds), a profile, a check
    assert cost is not None
    assert cost.fixed_s == pytest.approx(14 + 6 + 8 + 0.5)
    assert cost.per_point_s == pytest.approx(1.5)
    later = record(1, 40.0, {"search": 25.0, "retest": 6.0, "profile": 8.0}, evaluated=50)
    cost = budget.round_cost([base, later], SEARCH, side_rounds=3)
    assert cost == budget.RoundCost(15.0, 0.5) and cost.least_s == 17.0
    assert budget.round_cost([], SEARCH, 3) is None


def test_each_search_gets_half_of_what_is_left_all_of_it_in_the_last_round() -> None:
    cost = budget.RoundCost(20.0, 0.5)
    got = budget.search_options(SEARCH, 110.0, cost, last=False, objective_us=100.0)
    assert got.budget == Budget(90, 45.0) and got.top_k == 5
    last = budget.search_options(SEARCH, 110.0, cost, last=True, objective_us=100.0)
    assert last.budget == Budget(180, 90.0)
    # the user's own bounds still hold; the least a round is started with, too
    asked = replace(SEARCH, budget=Budget(30, 10.0))
    assert budget.search_options(asked, 110.0, cost, False, 100.0).budget == Budget(20, 10.0)
    assert budget.search_options(SEARCH, 5.0, cost, False, 100.0).budget == Budget(4, 2.0)
    # no budget: the search as asked
    assert budget.search_options(SEARCH, None, cost, False, 100.0) == SEARCH


def test_a_long_launch_shortens_the_retests_not_the_search() -> None:
    got = budget.search_options(SEARCH, None, None, last=False, objective_us=276_000.0)
    assert got.top_k == budget.LONG_TOP_K and got.budget == SEARCH.budget
    assert budget.retest_rounds(3, 276_000.0) == 2 and budget.retest_rounds(3, 900.0) == 3
    assert budget.retest_rounds(1, 276_000.0) == 1


def test_the_conductor_stops_when_another_round_does_not_fit() -> None:
    s = replace(situation(best=situation().best), time_left_s=14.2, round_s=35.4)
    d = decide(s, Policy(max_time_s=120.0))
    assert d.action == "stop"
    assert d.reason.startswith("the time budget (120 s) cannot hold another round: 14 s left, "
                               "and a round takes about 35 s")
    roomy = decide(replace(s, time_left_s=60.0), Policy(max_time_s=120.0))
    assert "time budget" not in roomy.reason


def base_recording(us: float, seconds: float) -> list[Evaluation]:
    return [Evaluation(0, {}, "ok", measurements=(measurement("main", us, seconds=seconds),),
                       checked=(measurement("odd", 1.0, seconds=seconds),), registers=32,
                       compile_s=0.5)]


def moves_run(tmp: Path, us: float, seconds: float, max_time: float | None,
              effects: dict[tuple[str, Any], Any], rounds: int = 5
              ) -> tuple[State, Context, list[str], Counter[str]]:
    """frames_wsum through the loop (readonly and unroll called for), each measurement
    taking `seconds` on the simulated clock; the phases the evaluators measured in."""
    spec = load_spec(MOVES / "frames_wsum.toml")
    source = spec.source_path.read_text()
    backend = SimBackend({text_hash(source): base_recording(us, seconds)},
                         {text_hash(source): load_profile("fused_add_rmsnorm")},
                         move_effects=effects)
    phases: Counter[str] = Counter()
    make = backend.evaluator

    def counting(spec_: Any) -> SimEvaluator:
        ev = make(spec_)
        measure = ev.measure

        def measured(point: Any, built: Any, shape: Any, phase: str) -> Any:
            phases[phase] += 1
            return measure(point, built, shape, phase)
        ev.measure = measured  # type: ignore[method-assign]
        return ev
    backend.evaluator = counting  # type: ignore[method-assign]
    store = Store.open(tmp / "runs.sqlite")
    run_id = store.create_run(spec.kernel_name, str(spec.spec_path), {}, backend.device)
    notices: list[str] = []
    options = RunPlan(("main",), Policy(max_rounds=rounds, max_time_s=max_time), SEARCH,
                          side_rounds=3, max_time_s=max_time)
    ctx = Context(spec, tomllib.loads(spec.spec_path.read_text()), "", backend, compendium(),
                  store, run_id, tmp / "run", options, notice=notices.append)
    return loop.run(ctx), ctx, notices, phases


def test_a_run_stops_when_its_time_cannot_hold_another_round(tmp_path: Path) -> None:
    """Each measurement takes 2 s: the baseline alone takes about 20 s with its profile, a
    moves round well over a minute; with 90 s the run stops after its first round, saying
    why, and inside its budget."""
    st, ctx, notices, _ = moves_run(tmp_path, 300.0, 2.0, 90.0,
                                    {("PNCU_READONLY", 1): 0.97})
    actions = [r.action for r in st.records]
    assert actions[0] == "baseline" and len(actions) >= 2
    last = st.records[-1].decision
    assert last.action == "stop" and last.reason.startswith("the time budget (90 s) cannot "
                                                            "hold another round")
    assert ctx.backend.clock() <= 90.0  # the run started at 0 on the simulated clock
    assert any(n.startswith("time: ") and "this search may take" in n for n in notices)
    assert {"search", "retest", "side_by_side", "profile"} <= set(st.records[1].phases)
    assert {"retest", "check", "profile"} <= set(st.records[0].phases)
    # the trace says where each round's time went; a search cut to its share walks TPE
    line = search_line(st.records[1])
    assert line.startswith("strategy tpe; evaluated 4,") and "side by side" in line
    assert search_line(st.records[0]).startswith("no search ran; the round ")


def test_without_a_time_budget_the_same_run_goes_on(tmp_path: Path) -> None:
    st, _, notices, _ = moves_run(tmp_path, 300.0, 2.0, None, {("PNCU_READONLY", 1): 0.97})
    assert not any("time budget" in r.decision.reason for r in st.records)
    assert not any(n.startswith("time: ") for n in notices)


def test_a_long_launch_is_retested_in_fewer_rounds(tmp_path: Path) -> None:
    """A 2 ms launch: the baseline's re-test and the side by side take 2 rounds, not 3."""
    _, _, _, long_phases = moves_run(tmp_path / "long", 2000.0, 0.05, None,
                                     {("PNCU_READONLY", 1): 0.5}, rounds=1)
    _, _, _, short_phases = moves_run(tmp_path / "short", 200.0, 0.05, None,
                                      {("PNCU_READONLY", 1): 0.5}, rounds=1)
    assert long_phases[RETEST] < short_phases[RETEST]
    # the baseline (1 entrant) and the side by side (2) lose a round each; the search's own
    # re-test keeps its top 2 rather than 5 (here the space has fewer points than that)
    assert short_phases[RETEST] - long_phases[RETEST] >= 3


@pytest.mark.parametrize(("given", "seconds"), [("120", 120.0), ("none", None), ("0", None),
                                                ("None", None), ("2.5", 2.5)])
def test_max_time_on_the_command_line(given: str, seconds: float | None) -> None:
    assert MaxTime().convert(given, None, None) == seconds


@pytest.mark.parametrize("given", ["-1", "soon"])
def test_a_bad_max_time_is_a_usage_error(given: str) -> None:
    with pytest.raises(click.BadParameter, match="seconds, or 0 / none for no limit"):
        MaxTime().convert(given, None, None)


def test_the_api_takes_none_for_no_limit_and_refuses_zero() -> None:
    with pytest.raises(InputError, match="'max_time' takes a finite number > 0"):
        api.tune(MOVES / "frames_wsum.cu", api.TuneOptions(max_time=0))
