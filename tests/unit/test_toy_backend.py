"""Adding a target is one folder and one registry entry: the test-only "toy" target
(tests/fakes/toy_backend/: Python kernels, a collector of its own, one diagnosis rule) is
registered through `pragma_ncu.backends.register`, then every command of a kernel runs on it
through the library API and the CLI: bench, profile, explain (a profile, or the source
profiled now), triage (two versions measured now) and the whole tune loop (baseline, tune,
profile, decide, stop), whose trace renders. Nothing in pragma_ncu names it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu import api, backends
from pragma_ncu.backends.base import Target
from pragma_ncu.cli.main import cli
from pragma_ncu.diagnose.engine import Rules
from pragma_ncu.infra.errors import SpecError
from pragma_ncu.infra.store import Store
from pragma_ncu.measure.traces import load_trace
from pragma_ncu.report.trace import render_markdown
from pragma_ncu.spec.file import load_spec
from tests.fakes.toy_backend import KERNELS, TARGET


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
    result = api.tune(KERNELS / "scale.toy", api.TuneOptions(rounds=3, store=store))
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
    options = api.TuneOptions(rounds=1, store=tmp_path / "r.sqlite")
    result = api.tune(load_spec(KERNELS / "scale.toml"), options)
    path = result.records[0].best_after.profile_path  # type: ignore[union-attr]
    found = api.explain(path)
    (kernel, diagnosis), = found.kernels
    assert backends.collector_of(found.profile) == "toycount"
    assert diagnosis.findings[0].title == "Per-block overhead dominates"
    assert found.diagnoses == [diagnosis]


SLOW = "cost_us = n / 1000.0 * (1.0 + 16.0 / BLOCK + BLOCK / 128.0)"  # twice the block cost


def versions(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The toy kernel as it is and a version whose blocks cost twice as much, with its spec."""
    text = (KERNELS / "scale.toy").read_text()
    base, new = tmp_path / "scale.toy", tmp_path / "slow.toy"
    base.write_text(text)
    new.write_text("\n".join(SLOW if line.startswith("cost_us") else line
                             for line in text.splitlines()) + "\n")
    spec = tmp_path / "scale.toml"
    spec.write_text((KERNELS / "scale.toml").read_text())
    return base, new, spec


def test_bench_profile_explain_and_triage_through_the_api(toy: None, tmp_path: Path) -> None:
    base, new, spec = versions(tmp_path)
    report = api.bench(base)
    assert report.all_verified and report.device is not None
    assert [r.shape.name for r in report.rows] == ["small", "big"]
    assert report.rows[0].measurement.timing.median_us == pytest.approx(9.0, rel=0.01)
    run = api.profile(base, options=api.ProfileOptions(out_dir=tmp_path / "profiled"))
    assert run.failure_kind() is None and run.collector == "toycount"
    assert run.profile_path == tmp_path / "profiled" / "profile.json"
    explained = api.explain(base, options=api.ProfileOptions(out_dir=tmp_path / "now"))
    assert explained.diagnoses[0].findings[0].title == "Per-block overhead dominates"
    found = api.triage(base, new, spec=spec, out=tmp_path / "triage")
    (group,) = found.kernels
    assert group.verdict == "regression" and group.duration.basis == "timing"
    assert group.duration.delta_pct == pytest.approx(89.0, abs=2.0)  # 17 / 9 µs per 1000


def test_bench_profile_explain_and_triage_through_the_cli(toy: None, tmp_path: Path) -> None:
    base, new, spec = versions(tmp_path)
    runner = CliRunner()
    bench = runner.invoke(cli, ["bench", "--kernel", str(base), "--format", "json"])
    assert bench.exit_code == 0, bench.output
    assert [r["status"] for r in json.loads(bench.output)["rows"]] == ["ok", "ok"]
    profiled = runner.invoke(cli, ["profile", "--kernel", str(base), "--out",
                                   str(tmp_path / "p")])
    assert profiled.exit_code == 0, profiled.output
    assert "toy_cost_us" in profiled.output and "launch_overhead" in profiled.output
    explained = runner.invoke(cli, ["explain", str(tmp_path / "p" / "profile.json")])
    assert explained.exit_code == 0 and "Per-block overhead dominates" in explained.output
    now = runner.invoke(cli, ["explain", str(base), "--out", str(tmp_path / "e")])
    assert now.exit_code == 0 and "Per-block overhead dominates" in now.output
    triaged = runner.invoke(cli, ["triage", str(base), str(new), "--spec", str(spec), "--out",
                                  str(tmp_path / "t"), "--format", "json"])
    assert triaged.exit_code == 1, triaged.output  # a regression
    (kernel,) = json.loads(triaged.stdout)["kernels"]
    assert kernel["verdict"] == "regression"


def test_a_target_must_keep_the_contract(toy: None) -> None:
    """Target is abstract: a subclass without its session or its diagnosis cannot be made,
    and every target known here (the toy one too) says what it is."""
    class Half(Target):
        name = "half"

        def diagnosis(self) -> Rules:
            raise AssertionError

    with pytest.raises(TypeError, match="open"):
        Half()  # type: ignore[abstract]
    for target in backends.targets():
        assert isinstance(target, Target)
        assert target.name and target.rules.target == target.name
        assert target.collectors and target.device_word
        assert backends.for_collector(target.collectors[0]) is target


def test_tune_goes_on_without_an_llm_endpoint_that_does_not_answer(toy: None,
                                                                   tmp_path: Path) -> None:
    """Issue 35: a port where nothing listens on 127.0.0.1: said once on the console, the run
    goes on without the LLM and exits 0, the summary and the trace warning of it."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    store = tmp_path / "runs.sqlite"
    res = CliRunner().invoke(cli, [
        "tune", "--kernel", str(KERNELS / "scale.toy"), "--store", str(store), "--rounds", "5",
        "--llm-model", "m", "--llm-base-url", url])
    assert res.exit_code == 0, res.output
    warning = (f"the LLM endpoint {url} is unreachable (connection failed: [Errno 111] "
               "Connection refused): from round 2 on, the run goes on without the LLM")
    assert res.stderr.count(warning) == 1, res.stderr
    assert f"warning: {warning}" in res.stdout
    assert res.stderr.count("asking the coder") == 1
    shown = CliRunner().invoke(cli, ["trace", "last", "--store", str(store)])
    assert f"**warning:** {warning}" in " ".join(shown.output.split())  # (prose wraps)
