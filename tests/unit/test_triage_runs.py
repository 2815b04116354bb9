"""`run:ID` sides of triage: a tune run of the run store stands for the profile the loop took of
its historical best (rounds from a committed H200 trace, profiles from the recorded fixtures)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from pragma_ncu import api
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.store import Store
from pragma_ncu.measure.records import RoundRecord

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "docs" / "traces" / "silu_and_mul-template.h200.json"
PROFILES = ROOT / "tests" / "fixtures" / "profiles"


def stored_run(store: Path, profile: Path | None) -> str:
    """The trace's run in a fresh store, its best's profile at `profile` (None: none)."""
    data = json.loads(TRACE.read_text())
    with Store.open(store) as db:
        run_id = db.create_run("silu_and_mul", "silu_and_mul.toml", data["run"]["config"])
        for rec in (RoundRecord.from_json(r) for r in data["rounds"]):
            best = rec.best_after
            if best is not None:
                best = replace(best, profile_path=str(profile) if profile else "")
            db.close_round(run_id, rec.round, rec.decision.action,
                           replace(rec, best_after=best).to_json())
    return run_id


def test_a_run_is_its_historical_best_by_the_profile_the_loop_took(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    run_id = stored_run(store, PROFILES / "silu_and_mul" / "profile.json.gz")
    report = api.triage(f"run:{run_id}", PROFILES / "silu_and_mul", store=store)
    assert report.exit_code == 0 and report.base.kind == "run"
    assert any(f"run {run_id}: the historical best (round" in n for n in report.notes)
    res = CliRunner().invoke(cli, ["triage", "run:last", str(PROFILES / "uncoalesced"),
                                   "--store", str(store), "--match", "order"])
    assert res.exit_code == 1, res.output  # the uncoalesced kernel is far slower
    assert "re-tested at" in res.output or "historical best" in res.output


def test_a_best_never_profiled_is_a_clear_error(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    stored_run(store, None)
    res = CliRunner().invoke(cli, ["triage", "run:last", str(PROFILES / "silu_and_mul"),
                                   "--store", str(store)])
    assert res.exit_code == 2 and "has no profile on disk (it was never profiled)" in res.output
