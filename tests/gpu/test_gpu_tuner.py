"""The tuner on a real GPU (skipped without one): a small search verifies every point it
times, beats the naive default of the templated silu_and_mul beyond noise, and prunes by the
device's own limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu import backends
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.search.autotune import autotune
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Budget
from pragma_ncu.search.space import Space
from pragma_ncu.spec.file import load_spec

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def test_small_search_beats_the_naive_default(runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("optuna")
    spec = load_spec(ROOT / "examples" / "templated" / "silu_and_mul.toml")
    space = Space.from_spec(spec).with_values("BLOCK", [256, 2048]).with_values("ROWS", [1])
    settings = load_settings().with_(cache_dir=tmp_path / "cache")
    session = backends.get("cuda").open(spec, settings, runner)
    result = autotune(spec, [spec.shape_named("llama-7b")], session.evaluator(spec),
                      SearchOptions(strategy="exhaustive", budget=Budget(20), jobs=4),
                      check_shapes=[spec.shape_named("odd")], space=space)
    assert result.stats.pruned == {"threads_per_block": 4}  # BLOCK=2048 on any CUDA GPU
    assert result.stats.verified == 4
    assert all(len(e.checked) == 1 for e in result.evaluations if e.ok)
    assert result.general.accepted and result.general.winner is not None
    assert result.general.winner.point["VEC"] > 1
    assert result.general.speedup is not None and result.general.speedup > 1.2
