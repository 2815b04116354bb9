"""`api.tune` on a spec built in Python (describe.task_spec), for real on this machine's CPU:
the run goes to the store like a file's, its spec is written beside the store, and the command
line resumes it."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu import api
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.store import Store
from pragma_ncu.measure.records import UNDECIDED
from pragma_ncu.spec.describe import Arg, task_spec
from pragma_ncu.spec.file import load_spec
from pragma_ncu.spec.model import TaskSpec

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "cpu" / "conv1d.cpp"
pytestmark = pytest.mark.skipif(
    not (shutil.which("c++") or shutil.which("g++")) or not shutil.which("valgrind"),
    reason="needs a C++ compiler and valgrind")


def _spec() -> TaskSpec:
    return task_spec(
        KERNEL,
        args=[Arg.input("x", "fp32", ["n"]), Arg.input("w", "fp32", ["k"]),
              Arg.output("y", "fp32", ["n - k + 1"]),
              Arg.scalar("n", "int32", "n"), Arg.scalar("k", "int32", "k")],
        shapes={"small": {"n": 4096, "k": 17}},
        params={"OPT": {"default": 0, "values": [0, 2], "flag": "-O{}"}},
        tolerance={"fp32": (1e-4, 1e-4)},
        metrics={"bytes": "4 * (n + k + (n - k + 1))", "flops": "2 * k * (n - k + 1)"},
        reference="reference.py:conv1d")


def test_a_spec_built_in_python_is_tuned_and_resumed(tmp_path: Path) -> None:
    env = {"PRAGMA_NCU_CACHE": str(tmp_path / "cache"),
           "PRAGMA_NCU_PERF": str(tmp_path / "no-perf-here")}
    store = tmp_path / "runs.sqlite"
    result = api.tune(_spec(), api.TuneOptions(rounds=1, store=store), settings=load_settings(env))
    assert result.run_id is not None and len(result.records) == 2, result.summary
    assert result.records[-1].best_after.verified
    decision = result.records[1].decision  # timed for real: faster, or too noisy to decide
    assert decision.accepted or decision.outcome == UNDECIDED, decision.reason
    assert result.summary["speedup"] > 1 if decision.accepted else \
        "too noisy to decide" in decision.reason

    with Store.open(store) as db:
        config = db.run(result.run_id).config
        written = Path(config["spec"])
        again = load_spec(written, KERNEL)  # the same spec, its reference by absolute path
        assert replace(again, reference=None) == replace(_spec(), spec_path=written,
                                                         reference=None)
        assert again.reference is not None
        assert again.reference.function == f"{KERNEL.parent / 'reference.py'}:conv1d"
        db.set_run_status(result.run_id, "interrupted")  # as if Ctrl-C had stopped it
    resumed = CliRunner(env=env).invoke(cli, ["tune", "--resume", result.run_id,
                                              "--store", str(store)])
    assert resumed.exit_code == 0, resumed.output
    with Store.open(store) as db:
        assert db.run(result.run_id).status == "done"


def test_resume_starts_the_workers_the_run_was_started_with(tmp_path: Path) -> None:
    env = {"PRAGMA_NCU_CACHE": str(tmp_path / "cache"),
           "PRAGMA_NCU_PERF": str(tmp_path / "no-perf-here")}
    store = tmp_path / "runs.sqlite"
    options = api.TuneOptions(rounds=1, store=store, pool=api.PoolRequest(workers=2))
    result = api.tune(_spec(), options, settings=load_settings(env))
    assert result.run_id is not None and len(result.records) == 2, result.summary
    assert set(result.records[1].search["workers"]) == {"cpu0", "cpu1"}
    with Store.open(store) as db:
        assert db.run(result.run_id).config["pool"] == {"gpus": None, "workers": 2,
                                                        "ray": None}
        db.set_run_status(result.run_id, "interrupted")
    resumed = CliRunner(env=env).invoke(cli, ["tune", "--resume", result.run_id,
                                              "--store", str(store)])
    assert resumed.exit_code == 0, resumed.output
    assert "pool: the run's --workers 2" in resumed.output
    assert "starting 2 workers" in resumed.output
