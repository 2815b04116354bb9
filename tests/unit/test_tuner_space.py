"""Spec extensions for tuning, template instantiation, the space and the feasibility checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragma_ncu.build.compile import KernelResources
from pragma_ncu.infra.errors import SpecError, TemplateError
from pragma_ncu.search import feasibility
from pragma_ncu.search.space import Space, point_key
from pragma_ncu.spec import template as template
from pragma_ncu.spec.model import ResolvedLaunch
from tests.fakes.tuner import H200_LIMITS, SPEC_TOML, synthetic_spec


def test_space_from_spec_enumerates_the_product_in_order(tmp_path: Path) -> None:
    space = Space.from_spec(synthetic_spec(tmp_path))
    assert space.names == ("BLOCK", "VEC", "ROWS")
    assert space.size == 7 * 4 * 3
    points = list(space.points())
    assert len(points) == space.size
    assert points[0] == {"BLOCK": 32, "VEC": 1, "ROWS": 1}
    assert points[1] == {"BLOCK": 32, "VEC": 1, "ROWS": 2}
    assert len({point_key(p) for p in points}) == space.size


def test_space_can_be_narrowed_and_widened_between_rounds(tmp_path: Path) -> None:
    space = Space.from_spec(synthetic_spec(tmp_path))
    narrow = space.with_values("BLOCK", [256, 512, 256])
    assert narrow.dim("BLOCK").values == (256, 512) and narrow.size == 2 * 4 * 3
    wide = narrow.with_values("UNROLL", [1, 2])
    assert wide.names[-1] == "UNROLL" and wide.size == narrow.size * 2
    assert space.size == 84  # the original is unchanged
    with pytest.raises(ValueError):
        space.with_values("VEC", [])


def test_point_key_is_independent_of_order() -> None:
    assert point_key({"B": 1, "A": 2}) == point_key({"A": 2, "B": 1}) == "A=2,B=1"


def test_param_flags_follow_their_values(tmp_path: Path) -> None:
    params = {**SPEC_TOML["params"],  # type: ignore[dict-item]
              "FAST": {"default": False, "values": [False, True], "flag": "--use_fast_math"},
              "REGS": {"default": 0, "values": [0, 32, 64], "flag": "-maxrregcount={}"},
              "CACHE": {"default": "ca", "values": ["ca", "cg"], "flag": "-Xptxas -dlcm={}"}}
    spec = synthetic_spec(tmp_path, params=params)
    assert spec.compile_flags({}) == ("-O3", "-Xptxas", "-dlcm=ca")
    assert spec.compile_flags({"FAST": True, "REGS": 32, "CACHE": "cg"}) == (
        "-O3", "--use_fast_math", "-maxrregcount=32", "-Xptxas", "-dlcm=cg")


@pytest.mark.parametrize("params, field", [
    ({"V": {"default": 1, "values": [1, 1]}}, "params.V.values"),
    ({"V": {"default": 1, "valeus": [1, 2]}}, "params.V.valeus"),
    ({"V": {"default": 1, "flag": "use_fast_math"}}, "params.V.flag"),
])
def test_bad_params_are_named(tmp_path: Path, params: dict, field: str) -> None:
    with pytest.raises(SpecError) as err:
        synthetic_spec(tmp_path, params=params)
    assert err.value.field == field


def test_template_args_must_be_params_and_restrictions_must_name_known_things(
        tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="template_args"):
        synthetic_spec(tmp_path, kernel={"name": "k", "template_args": ["NOPE"]})
    with pytest.raises(SpecError, match="a value for 'H'"):
        synthetic_spec(tmp_path, tune={"restrictions": ["H % VEC == 0"]})
    spec = synthetic_spec(tmp_path, tune={"restrictions": ["d % VEC == 0"]})
    assert spec.restrictions == ("d % VEC == 0",)


def test_jinja_templates_render_strictly(tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path, kernel={"name": "k", "source": "k.cu.j2"})
    text = "const int v = {{ VEC }};\n{% if ROWS > 1 %}rows{% endif %}\n"
    inst = template.instantiate(spec, {"VEC": 8, "ROWS": 2}, text)
    assert inst.rendered and inst.text == "const int v = 8;\nrows\n"
    assert template.macro_params(spec, {"VEC": 8}) == {}  # no macro may clobber a template name
    with pytest.raises(TemplateError, match="UNKNOWN"):
        template.instantiate(spec, {}, "{{ UNKNOWN }}")
    with pytest.raises(TemplateError, match="syntax"):
        template.instantiate(spec, {}, "{% if %}")


def test_cxx_template_args_are_instantiated_not_defined(tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path, kernel={"name": "k", "template_args": ["VEC", "BLOCK"]})
    inst = template.instantiate(spec, {"VEC": 4, "BLOCK": 128}, "template <int VEC, int B>...")
    assert inst.text.endswith("reinterpret_cast<void*>(&k<4, 128>);\n") and not inst.rendered
    assert template.macro_params(spec, {"VEC": 4, "BLOCK": 128, "ROWS": 2}) == {"ROWS": 2}
    alone = template.standalone(spec, {"VEC": 4}, "template <int VEC, int B>...")
    assert "#define ROWS 1" in alone and "#define VEC" not in alone


def test_launch_limits_prune_before_compiling(tmp_path: Path) -> None:
    spec = synthetic_spec(tmp_path)
    shapes = spec.shapes
    assert feasibility.check_point(spec, {"BLOCK": 1024}, shapes, H200_LIMITS) is None
    too_big = feasibility.check_point(spec, {"BLOCK": 2048}, shapes, H200_LIMITS)
    assert too_big is not None and too_big.code == "threads_per_block"
    restricted = synthetic_spec(tmp_path, tune={"restrictions": ["d % (VEC * 64) == 0"]})
    odd = feasibility.check_point(restricted, {"VEC": 8}, shapes, H200_LIMITS)
    assert odd is not None and odd.code == "restriction" and "big" in odd.message


def test_registers_and_shared_memory_prune_after_compiling() -> None:
    launch = ResolvedLaunch((100, 1, 1), (1024, 1, 1), 0)
    fits = KernelResources(registers=64)
    assert feasibility.check_build(fits, launch, H200_LIMITS) is None
    spills_over = feasibility.check_build(KernelResources(registers=72), launch, H200_LIMITS)
    assert spills_over is not None and spills_over.code == "registers"
    big_smem = ResolvedLaunch((1, 1, 1), (128, 1, 1), 200_000)
    over = feasibility.check_build(KernelResources(registers=32, shared_static=40_000),
                                   big_smem, H200_LIMITS)
    assert over is not None and over.code == "shared_memory"


@pytest.mark.parametrize("regs, threads, smem, blocks", [
    (32, 256, 0, 8),      # threads and registers both allow 8
    (64, 256, 0, 4),      # 64 regs x 256 threads = 16384 per block -> 4
    (33, 256, 0, 6),      # 33 rounds up to 40 per thread (256 per warp granule) -> 6.4
    (16, 32, 0, 32),      # block slots cap at 32
    (32, 128, 100_000, 2),  # shared memory allows 2
])
def test_theoretical_blocks_per_sm(regs: int, threads: int, smem: int, blocks: int) -> None:
    launch = ResolvedLaunch((1, 1, 1), (threads, 1, 1), smem)
    got = feasibility.blocks_per_sm(KernelResources(registers=regs), launch, H200_LIMITS)
    assert got == blocks
