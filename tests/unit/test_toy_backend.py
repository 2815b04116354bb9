"""Adding a target is one folder and one registry entry: the test-only "toy" target
(tests/fakes/toy_backend/: Python kernels, a collector of its own, one diagnosis rule) is
registered through `pragma_ncu.backends.register`, then the whole tune loop runs on it through
the library API and the CLI (baseline, tune, profile, decide, stop) and its trace renders."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu import api, backends
from pragma_ncu.cli.main import cli
from pragma_ncu.errors import SpecError
from pragma_ncu.report.trace import load_trace, render_markdown
from pragma_ncu.specfile import load_spec
from pragma_ncu.store import Store
from tests.fakes.toy_backend import TARGET

KERNELS = Path(__file__).resolve().parents[1] / "fakes" / "toy_backend" / "kernels"


@pytest.fixture
def toy() -> Iterator[None]:
    backends.register(TARGET)
    try:
        yield
    finally:
        backends.unregister(TARGET.name)


def test_the_registered_target_takes_its_sources(toy: None) -> None:
    spec = load_spec(KERNELS / "scale.toml")
    assert spec.target == "toy" and backends.target_for(spec) is TARGET
    assert "toy" in backends.names()


def test_its_spec_rules_are_the_one_validators(toy: None, tmp_path: Path) -> None:
    text = (KERNELS / "scale.toml").read_text().replace('dtype = "fp32"', 'dtype = "fp16"', 1)
    (tmp_path / "scale.toml").write_text(text.replace('"scale.toy"',
                                                      f'"{KERNELS / "scale.toy"}"'))
    with pytest.raises(SpecError, match="a type the toy evaluates with NumPy"):
        load_spec(tmp_path / "scale.toml")


def test_the_loop_runs_on_it_end_to_end(toy: None, tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    result = api.tune(KERNELS / "scale.toy", rounds=3, store=store)
    actions = [r.action for r in result.records]
    assert actions[:2] == ["baseline", "tune"]
    assert result.records[-1].decision.action == "stop"
    assert result.records[1].decision.accepted
    assert result.summary["best_params"] == {"BLOCK": 32}
    assert result.summary["speedup"] > 5  # 9.0 µs per 1000 elements at BLOCK=1, 1.5 at 32
    best = result.records[-1].best_after
    assert best is not None and best.classification == "launch_overhead"
    profile = json.loads(Path(best.profile_path).read_text())
    assert profile["collector"] == "toycount"
    with Store.open(store) as db:
        trace = render_markdown(load_trace(db, str(result.run_id)))
    assert "Round 1" in trace and "BLOCK" in trace


def test_and_through_the_cli(toy: None, tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    runner = CliRunner()
    res = runner.invoke(cli, ["tune", "--kernel", str(KERNELS / "scale.toy"), "--store",
                              str(store), "--rounds", "2", "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output[res.output.index("{"):])
    assert [r["action"] for r in data["rounds"]][:2] == ["baseline", "tune"]
    shown = runner.invoke(cli, ["trace", data["run"], "--store", str(store)])
    assert shown.exit_code == 0 and "Round 1" in shown.output


def test_its_profiles_are_diagnosed_by_its_rule(toy: None, tmp_path: Path) -> None:
    result = api.tune(load_spec(KERNELS / "scale.toml"), rounds=1, store=tmp_path / "r.sqlite")
    path = result.records[0].best_after.profile_path  # type: ignore[union-attr]
    found = api.explain(path)
    (kernel, diagnosis), = found.kernels
    assert backends.collector_of(found.profile) == "toycount"
    assert diagnosis.findings[0].title == "Per-block overhead dominates"
    assert found.diagnoses == [diagnosis]
