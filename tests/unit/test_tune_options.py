"""`api.TuneOptions` (issue 37): typed, frozen, checked when made (counts of 1 or more, rounds of
0 or more, fractions in (0, 1], finite seconds), recorded by the run store and
taken back by a resumed run, and read by the policy and the search field by field (the budget
no longer stands for two things)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from pragma_ncu import api
from pragma_ncu.infra.errors import ArgumentError, InputError
from pragma_ncu.spec.file import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "silu_and_mul.toml"


@pytest.mark.parametrize("field, value", [
    ("rounds", -1), ("patience", 0), ("budget", -3), ("retest_rounds", 0), ("move_points", 0),
    ("target", 0.0), ("target", 1.5), ("target", math.nan), ("max_time", math.inf),
    ("time_budget", -1.0), ("timeout", math.nan), ("rounds", "5"), ("seed", -1),
])
def test_a_bad_field_is_refused_when_made(field, value):
    with pytest.raises(ArgumentError, match=f"TuneOptions\\(\\): field '{field}'"):
        api.TuneOptions(**{field: value})


def test_an_unknown_strategy_is_refused_before_any_worker():
    with pytest.raises(InputError):
        api.TuneOptions(strategy="annealing")


def test_frozen_and_a_str_store_becomes_a_path():
    options = api.TuneOptions(store="x/runs.sqlite", max_time=None)
    assert options.store == Path("x/runs.sqlite") and options.max_time is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.rounds = 3  # type: ignore[misc]


def test_the_policy_and_the_search_read_their_own_fields():
    task = load_spec(SPEC)
    plan = api.TuneOptions(rounds=4, target=0.8, patience=3, budget=50, move_points=12,
                           time_budget=30.0, strategy="random", seed=7, retest_rounds=5,
                           max_time=90.0).plan(task, llm=True, jobs=2)
    assert (plan.policy.max_rounds, plan.policy.target_fraction, plan.policy.patience) == \
        (4, 0.8, 3)
    assert plan.policy.llm and plan.policy.move_points == 12 and plan.policy.max_time_s == 90.0
    assert (plan.search.budget.evaluations, plan.search.budget.seconds) == (50, 30.0)
    assert (plan.search.strategy, plan.search.seed, plan.search.jobs) == ("random", 7, 2)
    assert plan.side_rounds == 5 and plan.max_time_s == 90.0
    assert plan.tuned == tuple(s.name for s in task.shapes)
    # without move_points, a moves round spans the search budget, as before
    assert api.TuneOptions(budget=24).plan(task, False, 1).policy.move_points == 24


def test_the_record_round_trips_and_a_resume_keeps_where_and_how_to_run_as_given():
    task = load_spec(SPEC)
    first = api.TuneOptions(shapes=[task.shapes[0].name], rounds=2, budget=30, seed=3,
                            max_time=None, kernel_name=None, store=Path("a.sqlite"))
    record = first.record(task, None)
    assert record["llm"] == "none" and record["shapes"] == [task.shapes[0].name]
    now = api.TuneOptions(rounds=9, store=Path("b.sqlite"), timeout=30.0)
    back = now.recorded(record)
    assert (back.rounds, back.budget, back.seed, back.max_time) == (2, 30, 3, None)
    assert back.store == Path("b.sqlite") and back.timeout == 30.0
    # a run recorded before move_points, retest_rounds and max_time existed: their defaults
    old = {k: v for k, v in record.items() if k not in ("move_points", "retest_rounds",
                                                         "max_time")}
    assert now.recorded(old).max_time == 120.0 and now.recorded(old).move_points is None


def test_api_tune_takes_the_options_and_checks_them(tmp_path):
    with pytest.raises(ArgumentError, match="'options' takes"):
        api.tune(SPEC, {"rounds": 2})  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="field 'budget'"):
        api.tune(SPEC, api.TuneOptions(budget=0))
