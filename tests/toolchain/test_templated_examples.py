"""The templated examples compile at their defaults and at the corners of their spaces, through
the same path the tuner uses (jinja2 rendering, template instantiation, macros, flags)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu.backends.cuda.build import build_many
from pragma_ncu.build import task
from pragma_ncu.build.compile import BuildCache
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.toolchain import find_nvcc
from pragma_ncu.search.space import Space
from pragma_ncu.spec.file import load_spec, spec_path_for

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]
KERNELS = ["silu_and_mul.cu", "fused_add_rmsnorm.cu.j2", "merge_attn_states_lse.cu"]


@pytest.mark.parametrize("name", KERNELS)
def test_corners_of_the_space_compile_without_spills(name: str, tmp_path: Path) -> None:
    spec = load_spec(spec_path_for(ROOT / "examples" / "templated" / name))
    space = Space.from_spec(spec)
    corners = [{}, {d.name: d.values[0] for d in space.dims},
               {d.name: d.values[-1] for d in space.dims}]
    settings = load_settings()
    reqs = [task.build_request(spec, "sm_90", p, render_dir=tmp_path / "rendered")
            for p in corners]
    results = build_many(reqs, find_nvcc(settings), BuildCache(tmp_path / "build"), jobs=2)
    for point, result in zip(corners, results, strict=True):
        assert result.ok, f"{name} at {point}:\n{result.log}"
        assert result.resources is not None and result.resources.spill_stores == 0
    if spec.is_jinja:
        assert Path(reqs[1].source_name).parent.parent == tmp_path / "rendered"
    if spec.template_args:
        assert results[0].symbol is not None and results[0].symbol.startswith("_Z")
