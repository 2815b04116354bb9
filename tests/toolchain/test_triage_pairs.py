"""The planted regression pairs compile for sm_90, and the resources that plant them show in
ptxas's report (nvcc is present in CI)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pragma_ncu.backends.cuda.build import build
from pragma_ncu.build import task as tasks
from pragma_ncu.build.compile import BuildCache, BuildResult
from pragma_ncu.infra.settings import load_settings
from pragma_ncu.infra.toolchain import find_nvcc
from pragma_ncu.spec.file import load_spec

pytestmark = pytest.mark.toolchain
PAIRS_DIR = Path(__file__).resolve().parents[2] / "examples" / "regressions"
EXPECTED = tomllib.loads((PAIRS_DIR / "expected.toml").read_text())


def built(pair: str, side: str, tmp_path: Path) -> BuildResult:
    entry = EXPECTED[pair][side]
    spec = load_spec(PAIRS_DIR / entry["spec"], PAIRS_DIR / entry["kernel"])
    result = build(tasks.build_request(spec, "sm_90"), find_nvcc(load_settings()),
                   BuildCache(tmp_path / "build"))
    assert result.ok and result.resources is not None, result.log
    return result


@pytest.mark.parametrize("pair", sorted(EXPECTED))
def test_both_sides_build(pair, tmp_path):
    for side in ("base", "new"):
        assert "-lineinfo" in built(pair, side, tmp_path).command


def test_the_register_cap_makes_the_kernel_spill(tmp_path):
    base = built("spills", "base", tmp_path).resources
    new = built("spills", "new", tmp_path).resources
    assert base is not None and new is not None
    assert base.spill_stores == 0 and base.registers > 32
    assert new.spill_stores > 0 and new.spill_loads > 0 and new.registers <= 32


def test_the_occupancy_pair_reserves_40_kb_of_shared_memory(tmp_path):
    resources = built("occupancy", "new", tmp_path).resources
    assert resources is not None and resources.shared_static == 40 * 1024
