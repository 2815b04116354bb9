"""The moves' jinja2 text: a plain source (braces and all) renders back to itself, edits compose
only where they do not overlap, the defines comment keeps -D knobs flowing, and every move on
every kernel of the repository gives back the source byte for byte at its defaults."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path

import pytest

from pragma_ncu.build import task as tasks
from pragma_ncu.coder.moves import MOVES, Applied
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Edit
from pragma_ncu.coder.variant import original_variant, variant_spec
from pragma_ncu.spec.file import load_spec
from pragma_ncu.spec.template import defines_comment, macro_params, template_defines
from pragma_ncu.syntax.facts import parse_source
from tests.fakes.tuner import H200_LIMITS

ROOT = Path(__file__).resolve().parents[2]
KERNELS = sorted(p for p in [*ROOT.glob("examples/*.toml"), *ROOT.glob("examples/corpus/*.toml"),
                             *ROOT.glob("examples/planted/*.toml"),
                             *ROOT.glob("examples/moves/*.toml")]
                 if p.name != "expected.toml")


def test_literal_text_renders_to_itself_whatever_its_braces() -> None:
    rng = random.Random(7)
    alphabet = "{}%#-+ \n'\"ab"
    for _ in range(5000):
        pieces = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
                  for _ in range(3)]
        # literal pieces with template tags between them, as compose lays them out
        text = tpl.literal(pieces[0]) + tpl.insert("K", "x") + tpl.literal(pieces[1]) + \
            tpl.when("K", "y", pieces[2])
        assert tpl.render(text, {"K": 0}) == pieces[0] + pieces[1] + pieces[2]
        assert tpl.render(text, {"K": 1}) == pieces[0] + "x" + pieces[1] + "y"


def test_a_brace_initializer_survives_the_template() -> None:
    source = "int a[2][2] = {{1, 2}, {3, 4}}; {#x} {%y%}\n"
    template = tpl.compose(source.encode(), [], ("BLOCK",))
    assert tpl.render(template, {}) == source
    assert template_defines(template) == ("BLOCK",)


def test_overlapping_edits_are_refused_and_a_wrong_default_is_caught() -> None:
    data = b"abcdef"
    with pytest.raises(tpl.MoveTemplateError):
        tpl.compose(data, [Edit(1, 4, "x"), Edit(3, 5, "y")])
    bad = tpl.compose(data, [Edit(1, 2, tpl.when("K", "Q", "z"))])  # 'z' is not 'b'
    with pytest.raises(tpl.MoveTemplateError, match="line 1"):
        tpl.check_defaults(bad, data.decode(), {"K": 0})


def test_the_defines_comment_decides_the_macros_of_a_template(tmp_path: Path) -> None:
    spec = load_spec(ROOT / "examples" / "softmax.toml")
    text = defines_comment(("BLOCK",)) + "__global__ void softmax() {}\n"
    path = tmp_path / "softmax.cu.j2"
    path.write_text(text)
    jinja_spec = load_spec(ROOT / "examples" / "softmax.toml", kernel_path=path)
    assert macro_params(jinja_spec, {"BLOCK": 128}, text) == {"BLOCK": 128}
    assert macro_params(jinja_spec, {"BLOCK": 128}, "no comment") == {}
    assert macro_params(spec, {"BLOCK": 128}) == {"BLOCK": 128}  # a plain .cu: every knob
    req = tasks.build_request(jinja_spec, "sm_90", {"BLOCK": 512})
    assert req.defines == (("BLOCK", "512"),) and req.source == "__global__ void softmax() {}\n"


@pytest.mark.parametrize("spec_path", KERNELS, ids=lambda p: p.stem)
def test_every_move_gives_back_every_kernel_at_its_defaults(spec_path: Path,
                                                            tmp_path: Path) -> None:
    """All the moves that fit each kernel of the repository, composed: the template renders
    the source byte for byte at the defaults, the build gets the same macros and flags."""
    spec = load_spec(spec_path)
    point = spec.default_params()
    base = asm.base_of(original_variant(spec), spec, point)
    subject = asm.subject_of(base, spec, point, (), 128, H200_LIMITS)
    if isinstance(subject, str):
        pytest.skip(subject)  # refused as a whole (the source does not parse as written)
    moves = [r for r in asm.try_moves(subject, MOVES) if isinstance(r, Applied)]
    built, kept, _ = asm.assemble(base, moves, "moves 1", "", tmp_path)
    path = tmp_path / built.filename
    path.write_text(built.source)
    vspec = load_spec(spec_path, kernel_path=path)  # the user's tables, the template's text
    defaults = {**point, **{k.name: k.default for a in kept for k in a.knobs}}
    assert asm.instance(built, defaults) == spec.source_path.read_text()
    original = tasks.build_request(spec, "sm_90", point)
    again = tasks.build_request(vspec, "sm_90", defaults)
    assert again.source == original.source and again.defines == original.defines
    # at its boldest point no move changes the kernel's signature; the launch changes only
    # where a move searches it (coarsen's, split_reduction's and grid_size's grid, block_size's
    # block and the grid that follows it), and at
    # the defaults it is the launch as written at every shape
    signature = _signature(spec.source_path.read_text(), spec.kernel_name)
    for a in kept:
        bold = {**defaults, **{k.name: k.values[-1] for k in a.knobs}}
        assert _signature(asm.instance(built, bold), spec.kernel_name) == signature, a.move
    launch = built.overlay["launch"]
    moved = {a.move for a in kept}
    assert launch["shared_mem"] == spec.launch.shared_mem
    if "block_size" not in moved:
        assert launch["block"] == list(spec.launch.block)
    if all(a.grid is None and a.block is None for a in kept):
        assert launch["grid"] == list(spec.launch.grid)
    vspec_moved = variant_spec(tomllib.loads(spec_path.read_text()), built, spec.spec_path,
                               tmp_path / "variants")
    for shape in spec.shapes:
        assert vspec_moved.resolve(shape, defaults).launch == spec.resolve(shape, point).launch


def _signature(text: str, name: str) -> list[tuple[str, str, int]]:
    """The kernel's parameters as the harness passes them: name, base type, pointer levels."""
    (fn,) = parse_source(text).named(name)
    return [(p.name, p.type_name, p.pointers) for p in fn.params]


def test_a_jinja_template_is_moved_as_the_source_it_renders(tmp_path: Path) -> None:
    """A templated best: the moves read it rendered at the best's point, its parameters held
    there (the text no longer names them), its launch expressions kept."""
    spec = load_spec(ROOT / "examples" / "templated" / "fused_add_rmsnorm.toml")
    assert spec.is_jinja
    point = {**spec.default_params(), "VEC": 4}
    base = asm.base_of(original_variant(spec), spec, point)
    assert "{{" not in base.text and "{%" not in base.text
    assert base.filename == "fused_add_rmsnorm.cu"
    assert base.params == point and base.macros == ()  # held, none passed as -D
    assert base.launch["grid"] == list(spec.launch.grid)
    subject = asm.subject_of(base, spec, point, (), 32, H200_LIMITS)
    assert not isinstance(subject, str), subject
    # what the rendered source already does, the moves see: it is tuned by hand
    reasons = {r.move: r.reason for r in asm.try_moves(subject, MOVES) if not
               isinstance(r, Applied)}
    assert reasons["launch_bounds"] == "the kernel has launch bounds already"
    assert reasons["readonly"] == "no input pointer lacks const __restrict__"


def test_a_source_with_a_header_of_its_own_keeps_finding_it(tmp_path: Path) -> None:
    """The variant's file is written under the run's folder: a quoted include gets the
    user's folder on the include path, once; an angle-bracket one changes nothing."""
    from tests.fakes.moves import applied, spec_of
    source = ('#include "helper.h"\n#include <cuda_fp16.h>\n'
              'extern "C" __global__ void k(float* y, const float* x, int n)\n'
              '{\n    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
              '    if (i < n) y[i] = expf(x[i]);\n}\n')
    spec = spec_of(tmp_path, source)
    base = asm.base_of(original_variant(spec), spec, {})
    built, _, _ = asm.assemble(base, [applied("fast_math", spec)], "moves 1", "", tmp_path)
    assert built.overlay["kernel"]["flags"] == ["-O3", f"-I{tmp_path}"]
    tables = {"kernel": {"name": "k", "flags": ["-O3"]}, "args": [
        {"name": a.name, "dtype": a.dtype.name, "role": a.role.value, "shape": list(a.shape),
         **({"value": a.value} if a.value is not None else {})} for a in spec.args],
        "shapes": [{"name": "main", "n": 4096}]}
    vspec = variant_spec(tables, built, spec.spec_path, tmp_path / "variants")
    again = asm.base_of(built, vspec, {})  # an earlier moves best: the flag is not doubled
    assert again.flags == ("-O3", f"-I{tmp_path}")
    rebuilt, _, _ = asm.assemble(again, [applied("fast_math", spec)], "moves 2", "", tmp_path)
    assert rebuilt.overlay["kernel"]["flags"] == ["-O3", f"-I{tmp_path}"]
    plain = spec_of(tmp_path, source.replace('#include "helper.h"\n', ""))
    built, _, _ = asm.assemble(asm.base_of(original_variant(plain), plain, {}),
                               [applied("fast_math", plain)], "moves 1", "", tmp_path)
    assert built.overlay["kernel"]["flags"] == ["-O3"]


def test_a_source_with_a_byte_that_is_not_utf8_keeps_its_offsets(tmp_path: Path) -> None:
    """A comment in Latin-1 (read as a surrogate escape, as kernel files are read): the
    offsets of the edits after it still land where they should."""
    from tests.fakes.moves import applied, spec_of
    source = ("// caf\udce9 au lait\n" 'extern "C" __global__ void k(float* y, const float* x, '
              "int n)\n{\n    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "    float a = 0.0f;\n    for (int r = 0; r < n; ++r) a += x[r];\n"
              "    if (i < n) y[i] = a;\n}\n")
    spec = spec_of(tmp_path, source.replace("\udce9", "e"))
    base = asm.Base(source, "k.cu", {}, {"grid": list(spec.launch.grid),
                                         "block": list(spec.launch.block), "shared_mem": "0"},
                    ("-O3",), ())
    subject = asm.subject_of(base, spec, {}, (), 32, H200_LIMITS)
    assert not isinstance(subject, str), subject
    move = next(r for r in asm.try_moves(subject, MOVES) if r.move == "unroll")
    assert isinstance(move, Applied)
    built, kept, _ = asm.assemble(base, [move], "moves 1", "")
    assert [a.move for a in kept] == ["unroll"]
    assert asm.instance(built, {"PNCU_UNROLL": 0}) == source
    assert "\n    #pragma unroll 2\n    for (int r = 0;" in asm.instance(built, {"PNCU_UNROLL": 2})
    assert applied("unroll", spec).sites == move.sites
