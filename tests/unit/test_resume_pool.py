"""`tune --resume` measures on the workers the run was started with (`--gpus`, `--workers`,
`--ray` are stored with its options), unless pool options are given now, which replace them
as a whole; either way it says which. The loop itself is stubbed: what is checked is the pool
the resumed run is handed."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from pragma_ncu import api
from pragma_ncu.backends.base import PoolRequest
from pragma_ncu.infra.store import Store
from pragma_ncu.pool.devices import GpuSelection, parse_gpus

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "templated" / "silu_and_mul.cu"
tuning = importlib.import_module("pragma_ncu.api.tune")  # api.tune is the function


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The pool each run is handed, instead of running it."""
    got: list[Any] = []

    def run(task, config, options, run_id, *rest):  # rest: start, llm, settings, progress
        got.append((config, options.pool))
        return api.TuneResult(run_id)
    monkeypatch.setattr(tuning, "_run", run)
    return got


def _interrupted(tmp: Path, pool: PoolRequest | None, handed: list[Any]) -> tuple[Path, str]:
    """A run started (through the API, as the command does) with `pool`, then interrupted."""
    store = tmp / "runs.sqlite"
    api.tune(KERNEL, api.TuneOptions(store=store, pool=pool))
    config, _ = handed.pop()
    with Store.open(store) as db:
        run_id = db.create_run("silu_and_mul", config["spec"], config, "GPU")
        db.set_run_status(run_id, "interrupted")
        assert db.run(run_id).config["pool"] == (pool.to_json() if pool else None)
    return store, run_id


@pytest.mark.parametrize("text", ["all", "2", "0,2", "3,"])
def test_gpu_selections_read_back_as_given(text: str) -> None:
    selection = parse_gpus(text)
    assert selection.text == text and parse_gpus(selection.text) == selection
    request = PoolRequest(selection, None, "auto")
    assert PoolRequest.from_json(request.to_json()) == request
    assert request.options() == f"--gpus {text} --ray auto"
    assert PoolRequest.from_json(None) == PoolRequest() and not PoolRequest().options()


def test_a_resumed_run_measures_on_the_gpus_it_started_with(tmp_path: Path,
                                                            handed: list[Any]) -> None:
    started = PoolRequest(GpuSelection(ordinals=(0, 2)))
    store, run_id = _interrupted(tmp_path, started, handed)
    said: list[str] = []
    api.tune(options=api.TuneOptions(store=store, pool=PoolRequest()), resume=run_id,
             progress=lambda e: said.append(e.text))
    assert handed[-1][1] == started  # the command line gives an empty request: not given
    assert "pool: the run's --gpus 0,2 (give --gpus, --workers or --ray to change it)" in said


def test_pool_options_given_with_resume_replace_the_runs_whole(tmp_path: Path,
                                                               handed: list[Any]) -> None:
    store, run_id = _interrupted(tmp_path, PoolRequest(GpuSelection(), None, "auto"), handed)
    said: list[str] = []
    given = PoolRequest(GpuSelection(count=2))
    api.tune(options=api.TuneOptions(store=store, pool=given), resume=run_id,
             progress=lambda e: said.append(e.text))
    assert handed[-1][1] == given  # --gpus 2 alone: the run's --ray is not kept
    assert said[0] == "pool: --gpus 2 as given, instead of the run's --gpus all --ray auto"


def test_a_run_without_a_pool_resumes_on_one_worker(tmp_path: Path, handed: list[Any]) -> None:
    store, run_id = _interrupted(tmp_path, None, handed)
    said: list[str] = []
    api.tune(options=api.TuneOptions(store=store), resume=run_id,
             progress=lambda e: said.append(e.text))
    assert handed[-1][1] is None and not any(s.startswith("pool:") for s in said)
