"""Small kernels with their specs, read the way the tune loop reads a best's source, for the
source-move tests: `subject(...)` is what a move sees, `applied(...)` what it proposes, and
`rendered(...)` the source it gives at some knob values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pragma_ncu.coder.moves import Applied, Refused, Subject, by_name
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.variant import Variant
from pragma_ncu.spec.file import parse_spec
from pragma_ncu.spec.model import TaskSpec
from tests.fakes.tuner import H200_LIMITS

ELEMENTWISE_ARGS = [
    {"name": "y", "dtype": "fp32", "shape": ["n"], "role": "output"},
    {"name": "x", "dtype": "fp32", "shape": ["n"], "role": "input"},
    {"name": "n", "dtype": "int32", "role": "scalar", "value": "n"},
]


def spec_of(tmp: Path, source: str, *, name: str = "k", args: list[dict[str, Any]] | None = None,
            grid: tuple[str, ...] = ("ceil_div(n, 256)",), block: tuple[str, ...] = ("256",),
            params: dict[str, Any] | None = None, flags: tuple[str, ...] = ("-O3",),
            shapes: list[dict[str, Any]] | None = None) -> TaskSpec:
    path = tmp / f"{name}.cu"
    path.write_text(source)
    data: dict[str, Any] = {
        "kernel": {"name": name, "flags": list(flags)},
        "launch": {"grid": list(grid), "block": list(block)},
        "args": args or ELEMENTWISE_ARGS,
        "shapes": shapes or [{"name": "main", "n": 1 << 20}, {"name": "odd", "n": 1001}]}
    if params:
        data["params"] = params
    return parse_spec(data, tmp / f"{name}.toml")


def base_of(spec: TaskSpec, point: dict[str, Any] | None = None) -> asm.Base:
    variant = Variant("original", spec.source_path.name, spec.source_path.read_text())
    return asm.base_of(variant, spec, {**spec.default_params(), **(point or {})})


def subject(spec: TaskSpec, *, hot: tuple[int, ...] = (), registers: int | None = 32,
            point: dict[str, Any] | None = None) -> Subject:
    values = {**spec.default_params(), **(point or {})}
    got = asm.subject_of(base_of(spec, values), spec, values, hot, registers, H200_LIMITS)
    assert not isinstance(got, str), got
    return got


def applied(move: str, spec: TaskSpec, **kw: Any) -> Applied:
    got = by_name(move).apply(subject(spec, **kw))
    assert isinstance(got, Applied), got
    return got


def refused(move: str, spec: TaskSpec, **kw: Any) -> str:
    got = by_name(move).apply(subject(spec, **kw))
    assert isinstance(got, Refused), f"{move} applied: {got}"
    return got.reason


def variant(spec: TaskSpec, moves: list[Applied], tmp: Path | None = None) -> Variant:
    built, kept, refused_ = asm.assemble(base_of(spec), moves, "moves 1", "test", tmp)
    assert [a.move for a in kept] == [a.move for a in moves], refused_
    return built


def next_round(spec: TaskSpec, moves: list[Applied], point: dict[str, Any],
               workdir: Path) -> tuple[Subject, asm.Base]:
    """What the moves read in the round after `moves` won at `point`: the subject of the best's
    plain source (their knobs baked in, the launch at `point`), and that base."""
    from pragma_ncu.coder.variant import variant_spec
    from pragma_ncu.spec.file import spec_tables

    tables = spec_tables(spec)
    built = variant(spec, moves)
    base = asm.base_of(built, variant_spec(tables, built, spec.spec_path, workdir / "moved"),
                       {**spec.default_params(), **point})
    plain = variant_spec(tables, asm.base_variant(base, "base"), spec.spec_path,
                         workdir / "base")
    got = asm.subject_of(base, plain, {}, (), 32, H200_LIMITS)
    assert not isinstance(got, str), got
    return got, base


def rendered(spec: TaskSpec, moves: list[Applied], **knobs: Any) -> str:
    """The source with `moves` at `knobs` (the others at their defaults)."""
    built = variant(spec, moves)
    defaults = {k.name: k.default for a in moves for k in a.knobs}
    return asm.instance(built, {**spec.default_params(), **defaults, **knobs})
