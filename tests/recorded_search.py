"""Searches replayed from measurements recorded on an NVIDIA H200 (2026-11-21,
tests/fixtures/tuner/): the templated examples' recorded evaluations played back to the
tuner, without a GPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pragma_ncu.search.autotune import tune_parameters
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Budget, SearchResult
from pragma_ncu.search.serial import Problem
from pragma_ncu.search.space import Space
from pragma_ncu.spec.file import load_spec, spec_path_for
from tests.fakes.replay import ReplayEvaluator, load_recording
from tests.fakes.tuner import H200_LIMITS

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "tuner"
KERNELS = {"silu_and_mul": "silu_and_mul.cu", "fused_add_rmsnorm": "fused_add_rmsnorm.cu.j2",
           "merge_attn_states_lse": "merge_attn_states_lse.cu"}


def replay(name: str, strategy: str, budget: int, seed: int = 0,
           jitter: float = 0.0) -> tuple[SearchResult, dict[str, Any]]:
    """The search of the templated example `name` replayed from its recording with `strategy`
    and `budget` (evaluations), each timing jittered by up to `jitter` percent (seeded by
    `seed`); the result and the recording's meta."""
    spec = load_spec(spec_path_for(ROOT / "examples" / "templated" / KERNELS[name]))
    evaluations, meta = load_recording(FIXTURES / f"{name}-h200.results.json.gz")
    shapes = tuple(spec.shape_named(s) for s in meta["shapes"])
    problem = Problem(spec, shapes, Space.from_spec(spec), check_shapes=(spec.shape_named("odd"),))
    evaluator = ReplayEvaluator(evaluations, H200_LIMITS, jitter_pct=jitter, seed=seed)
    options = SearchOptions(strategy=strategy, budget=Budget(budget), seed=seed)
    return tune_parameters(problem, evaluator, options, clock=evaluator.clock), meta
