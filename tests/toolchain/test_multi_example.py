"""The many-GPU example (examples/multi/sgemm_space): its space has the size its spec says, and
its extreme points compile for sm_90 without spills."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pragma_ncu.backends.cuda.build import build_many
from pragma_ncu.build import task
from pragma_ncu.build.compile import BuildCache
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.toolchain import find_nvcc
from pragma_ncu.search import feasibility
from pragma_ncu.search.space import Space
from pragma_ncu.spec.file import load_spec, spec_path_for
from tests.fakes.tuner import H200_LIMITS

ROOT = Path(__file__).resolve().parents[2]
SPEC = load_spec(spec_path_for(ROOT / "examples" / "multi" / "sgemm_space.cu"))


def test_574_of_864_points_can_run_on_sm_90() -> None:
    pruned: Counter[str] = Counter()
    for point in Space.from_spec(SPEC).points():
        bad = feasibility.check_point(SPEC, point, SPEC.shapes, H200_LIMITS)
        pruned[bad.code if bad else "feasible"] += 1
    assert pruned == {"feasible": 574, "restriction": 108, "threads_per_block": 182}


@pytest.mark.toolchain
def test_the_largest_and_smallest_tiles_compile_without_spills(tmp_path: Path) -> None:
    points = [{}, {"BM": 256, "BN": 128, "BK": 16, "TM": 8, "TN": 8, "INTERLEAVE": 1},
              {"BM": 32, "BN": 64, "BK": 32, "TM": 2, "TN": 2, "INTERLEAVE": 0}]
    for p in points[1:]:
        assert feasibility.check_point(SPEC, p, SPEC.shapes, H200_LIMITS) is None, p
    reqs = [task.build_request(SPEC, "sm_90", p) for p in points]
    results = build_many(reqs, find_nvcc(load_settings()), BuildCache(tmp_path), jobs=2)
    for point, result in zip(points, results, strict=True):
        assert result.ok, f"{point}:\n{result.log}"
        assert result.resources is not None and result.resources.spill_stores == 0, point
