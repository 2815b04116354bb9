"""`init` on every bundled example's source, against the spec shipped beside it.

Covered: every spec under examples/ that names a kernel (the top-level examples, templated/,
roofline/, cpu/, corpus/, planted/, faults/, init/, moves/ and both sides of every
regressions/ pair; examples/apps/ has no specs); for each,
the drafted arguments (names, dtypes, roles), `#ifndef` knobs and template parameters are
compared with the shipped spec. Not covered: templated/fused_add_rmsnorm.cu.j2, a jinja2
template that is not C until rendered (init refuses it with a message, tested below).

The exceptions are listed with the reason each is principled; nothing else may differ.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from pragma_ncu.draft import draft_spec
from pragma_ncu.infra.errors import DraftError
from pragma_ncu.spec.file import load_spec, parse_spec, placeholders
from pragma_ncu.spec.model import TaskSpec

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

# (spec, argument) -> (drafted role, shipped role, why the signature cannot say)
ROLE_EXCEPTIONS = {
    ("corpus/scatter_store.toml", "records"): (
        "output", "inout", "the kernel writes one float of every 8-float record; the spec keeps "
        "the rest as they were (inout), which no access order shows"),
    ("moves/structural/extra/transpose_u8_pitched.toml", "dst"): (
        "output", "inout", "the kernel writes H bytes of every pitch_out-byte row; the spec keeps "
        "the bytes past them as they were (inout), which no access order shows"),
    ("faults/mutate_input.toml", "x"): (
        "inout", "input", "the planted fault: x is read, then written; the spec calls it an "
        "input so that the harness catches the mutation"),
}
# (spec, C name) -> shipped name: argument names are labels, the kernel's are kept
RENAMED = {("corpus/smem_transpose.toml", "in"): "x"}  # `in`: drafted as in_ (Python keyword)
# Knobs a shipped spec leaves at the file's default (it need not declare them).
EXTRA_KNOBS = {("regressions/occupancy/base.toml", "SCRATCH"),
               ("regressions/occupancy/new.toml", "SCRATCH")}


def cases() -> list[tuple[str, Path]]:
    """(spec, source) for every shipped spec that names a kernel, except jinja2 templates."""
    out = []
    for toml in sorted(EXAMPLES.rglob("*.toml")):
        data = tomllib.loads(toml.read_text())
        if "kernel" not in data:
            continue  # expected.toml and the like
        source = data["kernel"].get("source")
        if source is not None:
            if not source.endswith(".j2"):
                out.append((toml, toml.parent / source))
        elif (toml.parent / "base.cu").is_file():  # a regression pair: one spec, two kernels
            out += [(toml, toml.parent / "base.cu"), (toml, toml.parent / "new.cu")]
        else:
            out.append((toml, toml.with_suffix(".cu")))
    return [(t.relative_to(EXAMPLES).as_posix(), s) for t, s in out]


CASES = cases()


def test_every_bundled_example_is_covered() -> None:
    folders = {Path(spec).parts[0] if "/" in spec else "." for spec, _ in CASES}
    assert folders == {".", "templated", "roofline", "cpu", "corpus", "planted", "faults",
                       "regressions", "init", "multi", "moves"}
    assert len(CASES) >= 85, len(CASES)


def _shipped(spec: str, source: Path) -> TaskSpec:
    return load_spec(EXAMPLES / spec, source)


def _knobs(spec: TaskSpec) -> set[str]:
    """The shipped params that reach the source as macros: not template arguments, not compiler
    flags, and named in the code (comments stripped), not only in launch expressions."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", " ", spec.source_path.read_text(), flags=re.S)
    return {p.name for p in spec.params if p.name not in spec.template_args and p.flag is None
            and re.search(rf"\b{p.name}\b", code)}


@pytest.mark.parametrize(("spec", "source"), CASES, ids=[f"{s}:{p.name}" for s, p in CASES])
def test_init_matches_the_shipped_spec(spec: str, source: Path, tmp_path: Path) -> None:
    shipped = _shipped(spec, source)
    draft = draft_spec(source, shipped.kernel_name, tmp_path / "draft.toml").kernel
    assert len(draft.args) == len(shipped.args)
    for got, want in zip(draft.args, shipped.args, strict=True):
        c_name = got.name.removesuffix("_") if got.name.endswith("_") else got.name
        assert RENAMED.get((spec, c_name), got.name) == want.name
        assert got.dtype == want.dtype.name, (got.name, got.dtype_note)
        expected = ROLE_EXCEPTIONS.get((spec, got.name), (want.role.value,))[0]
        assert got.role == expected, (got.name, got.role_note)
    knobs = {p.name for p in draft.params if p.note.startswith("knob")}
    assert _knobs(shipped) <= knobs
    assert {(spec, k) for k in knobs - _knobs(shipped)} <= EXTRA_KNOBS
    assert len(draft.template_args) == len(shipped.template_args)
    assert draft.target == shipped.target


def test_the_exceptions_are_real() -> None:
    """Each listed exception is still an example's difference (a stale entry fails)."""
    specs = {spec for spec, _ in CASES}
    for spec, _ in [*ROLE_EXCEPTIONS, *RENAMED, *EXTRA_KNOBS]:
        assert spec in specs
    for (spec, arg), (_, shipped_role, _) in ROLE_EXCEPTIONS.items():
        source = dict(CASES)[spec]
        assert next(a for a in _shipped(spec, source).args if a.name == arg).role == shipped_role


@pytest.mark.parametrize(("spec", "source"), CASES, ids=[f"{s}:{p.name}" for s, p in CASES])
def test_the_draft_filled_with_the_shipped_values_is_the_shipped_spec(
        spec: str, source: Path, tmp_path: Path) -> None:
    """The draft is a loadable spec once its placeholders hold the shipped spec's values: the
    same arguments (shapes and scalar values too), knobs and template arguments."""
    shipped = _shipped(spec, source)
    draft = draft_spec(source, shipped.kernel_name, tmp_path / "draft.toml", reference=None)
    data = tomllib.loads(draft.spec_text)
    raw = tomllib.loads((EXAMPLES / spec).read_text())
    for mine, theirs in zip(data["args"], raw["args"], strict=True):
        for key in ("shape", "value", "init"):
            if key in theirs:
                mine[key] = theirs[key]
        mine["name"] = theirs["name"]
        if (spec, mine["name"]) in ROLE_EXCEPTIONS:
            mine["role"] = theirs["role"]
    renames = dict(zip(data["kernel"].get("template_args", []),
                       raw["kernel"].get("template_args", []), strict=True))
    params = {renames.get(k, k): v for k, v in data.get("params", {}).items()}
    data["params"] = {**params, **raw.get("params", {})}
    for key in ("template_args", "flags"):
        if key in raw["kernel"]:
            data["kernel"][key] = raw["kernel"][key]
    for section in ("launch", "shapes", "tolerance", "metrics", "tune"):
        if section in raw:
            data[section] = raw[section]
    assert placeholders(data) == []
    built = parse_spec(data, tmp_path / "draft.toml", source)
    assert built.args == shipped.args
    assert built.template_args == shipped.template_args
    assert {p.name for p in built.params} >= {p.name for p in shipped.params}


def test_init_refuses_a_jinja2_template(tmp_path: Path) -> None:
    with pytest.raises(DraftError, match="jinja2 template"):
        draft_spec(EXAMPLES / "templated" / "fused_add_rmsnorm.cu.j2")
