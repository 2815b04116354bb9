"""Nothing left behind on failure: `tune` creates its run store when a run starts (a bad spec,
a bad option or a missing store to resume from leave no file), and a run that fails or is
interrupted in round 0 leaves a record that --resume continues from round 0."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pragma_ncu import api, loop
from pragma_ncu.cli.main import cli
from pragma_ncu.infra.errors import InputError, KernelFailure
from pragma_ncu.infra.store import Store
from tests.fakes.toy_backend import KERNELS


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    for name in ("scale.toy", "scale.toml"):
        shutil.copy(KERNELS / name, tmp_path / name)
    return tmp_path / "scale.toy"


def test_a_bad_spec_leaves_no_store(toy: None, kernel: Path, tmp_path: Path) -> None:
    spec = kernel.with_suffix(".toml")
    spec.write_text(spec.read_text().replace('role = "output"', 'role = "outptu"'))
    store = tmp_path / "state" / "runs.sqlite"
    result = CliRunner().invoke(cli, ["tune", "--kernel", str(kernel), "--store", str(store)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not store.parent.exists()


def test_a_bad_shape_or_a_missing_kernel_leaves_no_store(toy: None, kernel: Path,
                                                         tmp_path: Path) -> None:
    store = tmp_path / "state" / "runs.sqlite"
    with pytest.raises(InputError):
        api.tune(kernel, api.TuneOptions(shapes=["no-such-shape"], store=store))
    with pytest.raises(InputError, match="kernel file not found"):
        api.tune(tmp_path / "none.toy", api.TuneOptions(store=store))
    assert not store.parent.exists()


def test_a_run_that_fails_in_round_0_is_recorded_and_resumes(toy: None, kernel: Path,
                                                            tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    good = kernel.read_text()
    kernel.write_text("y = (\n")  # does not "compile"
    result = CliRunner().invoke(cli, ["tune", "--kernel", str(kernel), "--store", str(store)])
    assert result.exit_code == 1, result.output  # tune's verdict: the original fails
    with Store.open(store) as db:
        (run,) = db.runs()
        assert run.status == "failed" and "does not build" in run.summary["error"]
    kernel.write_text(good)
    resumed = api.tune(options=api.TuneOptions(store=store, rounds=1), resume=run.id)
    assert resumed.run_id == run.id and resumed.records[0].action == "baseline"
    with Store.open(store) as db:
        assert db.resolve(run.id).status == "done"


def test_a_run_interrupted_in_round_0_resumes_from_round_0(
        toy: None, kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "runs.sqlite"
    real = loop.rounds.baseline

    def interrupted(ctx: loop.Context) -> loop.State:
        ctx.store.begin_round(ctx.run_id, 0)  # round 0 had started when Ctrl-C came
        raise KeyboardInterrupt

    monkeypatch.setattr(loop.rounds, "baseline", interrupted)
    result = CliRunner().invoke(cli, ["tune", "--kernel", str(kernel), "--store", str(store)])
    assert result.exit_code == 130 and "--resume" in result.output
    with Store.open(store) as db:
        (run,) = db.runs()
        assert run.status == "interrupted"
    monkeypatch.setattr(loop.rounds, "baseline", real)
    resumed = api.tune(options=api.TuneOptions(store=store, rounds=1), resume="last")
    assert resumed.run_id == run.id and [r.round for r in resumed.records][:1] == [0]


def test_a_done_run_is_not_resumed(toy: None, kernel: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    done = api.tune(kernel, api.TuneOptions(store=store, rounds=1))
    with pytest.raises(InputError, match="already done"):
        api.tune(options=api.TuneOptions(store=store), resume=str(done.run_id))


def test_kernel_failure_is_the_verdict_kind() -> None:
    assert issubclass(loop.rounds.TuneError, KernelFailure)
