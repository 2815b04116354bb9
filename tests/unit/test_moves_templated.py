"""The source moves on a C++ function template kernel (`[kernel] template_args`): the moves'
template (a .cu.j2) keeps instantiating the kernel's template parameters, its defaults give the
source back byte for byte, the loop searches the moves beside the declared template parameters,
and the best kernel written out is still the user's template with its instance taken. And a run
in which every move is refused for one reason says that reason."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pragma_ncu import loop
from pragma_ncu.build import task as tasks
from pragma_ncu.coder.moves import MOVES, Applied
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import original_variant, variant_spec
from pragma_ncu.conductor.rules import decide
from pragma_ncu.conductor.situation import MoveOption, Policy
from pragma_ncu.infra.errors import TemplateError
from pragma_ncu.infra.store import Store
from pragma_ncu.loop.context import Context, RunPlan
from pragma_ncu.loop.moves import MovePlan, options_of
from pragma_ncu.measure.records import MoveTrial
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Budget, Evaluation
from pragma_ncu.spec.file import load_spec, parse_spec
from pragma_ncu.spec.template import instantiate
from tests.fakes.tune import SimBackend, load_profile, text_hash
from tests.fakes.tuner import H200_LIMITS, measurement
from tests.situations import situation
from tests.tune_rig import compendium

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "tests" / "fixtures" / "moves" / "templated" / "softplus_rows.toml"
INSTANCE = "reinterpret_cast<void*>(&softplus_rows<{}, float>);"


def applied_moves() -> tuple[Any, asm.Base, list[Applied]]:
    spec = load_spec(KERNEL)
    point = spec.default_params()
    base = asm.base_of(original_variant(spec), spec, point)
    subject = asm.subject_of(base, spec, point, (), 32, H200_LIMITS)
    assert not isinstance(subject, str), subject
    return spec, base, [r for r in asm.try_moves(subject, MOVES) if isinstance(r, Applied)]


def test_the_moves_read_a_template_kernel_and_keep_it_a_template(tmp_path: Path) -> None:
    spec, base, moves = applied_moves()
    assert [a.move for a in moves] == ["readonly", "unroll", "fast_math", "cache_policy"]
    variant, kept, refused = asm.assemble(base, moves, "moves 1", "", spec.source_path.parent)
    assert len(kept) == 4 and not refused and variant.filename == "softplus_rows.cu.j2"
    # the variant's spec keeps the C++ template arguments (a .j2 source may carry them)
    vspec = variant_spec(tomllib.loads(KERNEL.read_text()), variant, spec.spec_path,
                         tmp_path / "variants")
    assert vspec.is_jinja and vspec.template_args == ("BLOCK", "T")
    assert {"BLOCK", "PNCU_UNROLL"} <= {p.name for p in vspec.params}
    # at its defaults the template gives the source back, then the instance the user's gets
    defaults = vspec.default_params()
    assert asm.instance(variant, defaults) == spec.source_path.read_text()
    original = instantiate(spec, spec.default_params(), spec.source_path.read_text())
    assert instantiate(vspec, defaults, variant.source).text == original.text
    # at the boldest point too, with the block size a template argument still
    bold = {**defaults, "BLOCK": 256, **{k.name: k.values[-1] for a in kept for k in a.knobs}}
    text = tasks.build_request(vspec, "sm_90", bold).source
    assert "template <int BLOCK, typename T>" in text and "#pragma unroll 8" in text
    assert text.rstrip().endswith(INSTANCE.format(256))
    assert "const T* __restrict__ x" in text


def test_a_template_argument_cannot_be_a_jinja2_variable_as_well(tmp_path: Path) -> None:
    source = tmp_path / "k.cu.j2"
    source.write_text("template <int BLOCK>\n__global__ void k(float* y) { y[{{ BLOCK }}] = 0; }\n")
    spec = parse_spec({"kernel": {"name": "k", "template_args": ["BLOCK"]},
                       "params": {"BLOCK": 128}, "launch": {"grid": ["1"], "block": ["BLOCK"]},
                       "args": [{"name": "y", "dtype": "fp32", "shape": ["n"],
                                 "role": "output"}],
                       "shapes": [{"name": "a", "n": 256}]}, tmp_path / "k.toml", source)
    with pytest.raises(TemplateError, match="BLOCK both a jinja2 variable of the template and "
                                             "a C\\+\\+ template argument"):
        instantiate(spec, {}, source.read_text())


def _recording(us: dict[int, float]) -> list[Evaluation]:
    """Each BLOCK's evaluation, as the baseline names its point (with the fixed T) and as the
    search does (the searched parameters only)."""
    points = [({"BLOCK": b, "T": "float"}, t) for b, t in us.items()]
    points += [({"BLOCK": b}, t) for b, t in us.items()]
    return [Evaluation(i, point, "ok", measurements=(measurement("main", t),),
                       checked=(measurement("odd", 1.0),), registers=32, compile_s=0.5)
            for i, (point, t) in enumerate(points)]


def test_the_loop_searches_moves_beside_the_template_parameters(tmp_path: Path) -> None:
    spec = load_spec(KERNEL)
    source = spec.source_path.read_text()
    backend = SimBackend({text_hash(source): _recording({64: 104.0, 128: 100.0, 256: 103.0})},
                         {text_hash(source): load_profile("fused_add_rmsnorm")},
                         move_effects={("PNCU_READONLY", 1): 0.6, ("PNCU_UNROLL", 4): 0.9},
                         move_profiles={(("PNCU_READONLY", 1), ("PNCU_UNROLL", 4)):
                                        "bandwidth_ok"})
    store = Store.open(tmp_path / "runs.sqlite")
    run_id = store.create_run(spec.kernel_name, str(spec.spec_path), {}, backend.device)
    search = SearchOptions(strategy="exhaustive", budget=Budget(evaluations=60), top_k=2,
                           rounds=2)
    ctx = Context(spec, tomllib.loads(KERNEL.read_text()), KERNEL.read_text(), backend,
                  compendium(), store, run_id, tmp_path / "run",
                  RunPlan(("main",), Policy(max_rounds=4), search, side_rounds=2))
    st = loop.run(ctx)

    actions = [r.action for r in st.records]
    assert actions[:2] == ["baseline", "tune"] and "moves" in actions
    moved = next(r for r in st.records if r.action == "moves")
    trials = {t.move: t for t in moved.moves}
    assert trials["readonly"].status == "searched" and trials["unroll"].status == "searched"
    assert "BLOCK" in moved.space and "PNCU_READONLY" in moved.space
    assert moved.decision.accepted and st.best.params["PNCU_READONLY"] == 1
    best = loop.write_best(ctx, st, tmp_path / "out")["best kernel"].read_text()
    assert "template <int BLOCK, typename T>" in best and "PNCU_" not in best
    assert best.rstrip().endswith(INSTANCE.format(st.best.params["BLOCK"]))


def test_every_move_refused_for_one_reason_is_said() -> None:
    why = "the kernel k is not one function definition in the source as written"
    options = options_of(why)
    assert all(not o.applies and o.reason == why for o in options)
    d = decide(replace(situation(), moves=options), Policy())
    assert d.action == "stop" and d.reason.endswith(f"(every source move was refused: {why})")
    # two reasons: each move's own says it (`pragma-ncu moves`), not the stop
    mixed = (*options[:-1], MoveOption(options[-1].name, (), "", False, "another reason"))
    d = decide(replace(situation(), moves=mixed), Policy())
    assert "every source move was refused" not in d.reason


def test_a_moves_round_whose_moves_all_drop_for_one_reason_says_it_once() -> None:
    trials = tuple(MoveTrial(m, "memory_latency", "dropped", "it does not compile: error X")
                   for m in ("readonly", "unroll"))
    assert MovePlan(None, None, (), trials).failure == (
        "no move could be applied: every one (readonly, unroll) was dropped: it does not "
        "compile: error X")
    one = MovePlan(None, None, (), trials[:1]).failure
    assert one == "no move could be applied: readonly dropped (it does not compile: error X)"
