"""Workers on every GPU of this host (skipped without a GPU; the pinning checks need two): each
worker opens the GPU it was pinned to, and a small search spreads over them, each point
recording the GPU that measured it and the re-test staying on the first."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pragma_ncu import backends
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.pool import devices
from pragma_ncu.pool.runner import Runner
from pragma_ncu.pool.workers import WorkerPool
from pragma_ncu.search.autotune import autotune
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Budget
from pragma_ncu.search.space import Space
from pragma_ncu.spec.file import load_spec
from pragma_ncu.worker import serve

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpus(gpu_device):  # type: ignore[no-untyped-def]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    found = devices.list_gpus(sys.executable, env)
    if len(found) < 2:
        pytest.skip(f"one GPU here ({found[0].name}); pinning needs two")
    return found[:2], env


def test_each_worker_opens_its_gpu_and_the_search_spreads(gpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    chosen, env = gpus
    command = serve.command(sys.executable, "pragma_ncu.backends.cuda.worker")
    spec = load_spec(ROOT / "examples" / "templated" / "silu_and_mul.toml")
    space = Space.from_spec(spec).with_values("ROWS", [1]).with_values("BLOCK", [256, 512])
    settings = load_settings().with_(cache_dir=tmp_path / "cache")
    with WorkerPool(devices.gpu_slots(chosen, env),
                    lambda s: Runner(command, timeout_s=60, env=dict(s.env))).start() as pool:
        uuids = {lane.label: lane.device.uuid for lane in pool.lanes}
        session = backends.get("cuda").open(spec, settings, pool.primary.runner, pool=pool)
        result = autotune(spec, [spec.shape_named("llama-7b")], session.evaluator(spec),
                          SearchOptions(strategy="exhaustive", budget=Budget(20), jobs=4),
                          space=space)
    assert len(set(uuids.values())) == 2  # two GPUs, each worker on its own
    measured = [e for e in result.evaluations if e.ok]
    assert len(measured) == 8 and {e.device.label for e in measured} == set(uuids)
    assert all(e.device.uuid == uuids[e.device.label] for e in measured)
    assert result.retest_device.label == f"gpu{chosen[0].ordinal}"
    assert result.general.winner is not None and result.general.winner.point["VEC"] > 1
