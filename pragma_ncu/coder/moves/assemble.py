"""From the historical best to a moves variant, and back to plain source.

The *base* of a round is the best's source as plain text at the best's point: the user's .cu as
it is (its `#define` knobs still passed as -D), a jinja2 template rendered (its parameters then
held at the best's values), or an earlier moves variant with its knobs baked in. The moves the
conductor chose edit that text; `assemble` composes their edits into one template whose knobs
are searched beside the declared ones (narrowed around the best when the space would outgrow
the round's budget), with the launch grid coarsen recomputes.
"""

from __future__ import annotations

import ast
import copy
import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pragma_ncu import syntax as ts
from pragma_ncu.coder.knobs import params_table
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import KNOB_PREFIX, Applied, Refused, Subject, decode, encode
from pragma_ncu.coder.variant import Variant
from pragma_ncu.infra.errors import PragmaError
from pragma_ncu.spec.model import ParamValue, TaskSpec
from pragma_ncu.spec.template import (
    instantiation,
    macro_params,
    render_jinja,
    template_defines,
)
from pragma_ncu.syntax.facts import parse_source
from pragma_ncu.syntax.tree import syntax_tree

ORIGIN = "moves"
_KNOB_NAME = re.compile(rf"\b{KNOB_PREFIX}\w+\b")
_INT = re.compile(r"^\(?\s*(-?\d+)[uUlL]*\s*\)?$")
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"', re.M)  # found beside the source


@dataclass(frozen=True)
class Base:
    """Plain source and the spec tables that go with it (TOML form)."""

    text: str
    filename: str  # foo.cu (never .j2)
    params: dict[str, Any]  # declared parameters, the best's values as defaults
    launch: dict[str, Any]
    flags: tuple[str, ...]
    macros: tuple[str, ...]  # the declared parameters nvcc gets as -D


def is_moves(variant: Variant) -> bool:
    return variant.origin == ORIGIN


def base_of(variant: Variant, spec: TaskSpec, point: Mapping[str, ParamValue]) -> Base:
    """The plain source of `variant` (whose spec is `spec`) at `point`."""
    values = {**spec.default_params(), **point}
    launch = {"grid": list(spec.launch.grid), "block": list(spec.launch.block),
              "shared_mem": spec.launch.shared_mem}
    plain = variant.filename.removesuffix(".j2")
    if is_moves(variant):
        knobs = [p for p in spec.params if p.name.startswith(KNOB_PREFIX)]
        declared = [p for p in spec.params if not p.name.startswith(KNOB_PREFIX)]
        flags = (*spec.flags, *(f for p in knobs for f in p.flags_for(values[p.name])))
        return Base(render_jinja(variant.source, values, variant.filename), plain,
                    params_table(declared, values), baked(launch, values), flags,
                    template_defines(variant.source))
    if spec.is_jinja:  # the text no longer names its parameters: they hold the best's values
        return Base(render_jinja(variant.source, values, variant.filename), plain,
                    {p.name: values[p.name] for p in spec.params}, launch,
                    spec.compile_flags(values), ())
    return Base(variant.source, plain, params_table(spec.params, values), launch, spec.flags,
                tuple(macro_params(spec, values)))


def baked(table: dict[str, Any], values: Mapping[str, ParamValue]) -> dict[str, Any]:
    """A launch table with the moves' knobs replaced by their values (a choice between two
    expressions on a knob, `a if PNCU_K else b`, made)."""
    def sub(text: Any) -> Any:
        if not isinstance(text, str):
            return text
        return _chosen(_KNOB_NAME.sub(lambda m: str(values[m.group(0)]), text))
    return {k: [sub(x) for x in v] if isinstance(v, list) else sub(v) for k, v in table.items()}


def _chosen(text: str) -> str:
    """`text` with each `a if <number> else b` replaced by the branch the number picks."""
    if " if " not in text:
        return text
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return text

    class Choose(ast.NodeTransformer):
        def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
            self.generic_visit(node)
            if isinstance(node.test, ast.Constant):
                return node.body if node.test.value else node.orelse
            return node

    return ast.unparse(Choose().visit(tree))


def base_variant(base: Base, name: str) -> Variant:
    """The base as a variant of its own (plain source), to build its spec."""
    return Variant(name, base.filename, base.text, _tables(base, base.params), "moves-base")


def subject_of(base: Base, spec: TaskSpec, point: Mapping[str, ParamValue],
               hot_lines: Sequence[int] = (), registers: int | None = None,
               limits: Any = None) -> Subject | str:
    """What the moves read, or why none can read this source."""
    tree = syntax_tree(decode(ts.masked(encode(base.text))))
    found = ts.function_named(tree, spec.kernel_name)
    if len(found) != 1:
        return (f"the kernel {spec.kernel_name} is not one function definition in the source "
                "as written (a macro or an overload?)")
    if found[0].has_error:
        return ("the kernel's source does not parse as written (macros in its code, or syntax "
                "the CUDA grammar does not read): no move rewrites what it cannot read")
    extra = {} if limits is None else {
        "max_threads_per_sm": limits.max_threads_per_sm,
        "max_blocks_per_sm": limits.max_blocks_per_sm,
        "max_registers_per_sm": limits.max_registers_per_sm}
    return Subject(base.text, tree, found[0], spec, dict(point), tuple(hot_lines),
                   _constants(base.text, point, base.macros), base.macros, registers, **extra)


def _constants(text: str, point: Mapping[str, ParamValue],
               macros: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in parse_source(text).macros:
        found = _INT.match(value.strip())
        if found:
            out[name] = int(found.group(1))
    for name in macros:  # -D wins over the file's #ifndef default
        v = point.get(name)
        if isinstance(v, int) and not isinstance(v, bool):
            out[name] = v
    return out


def compose(base: Base, applied: Sequence[Applied]) -> tuple[str, list[Applied], list[Refused]]:
    """The template of the moves whose edits fit together (in order; a move whose edits
    overlap an earlier one's, or do not give back the base at its defaults, is refused),
    checked again as a whole."""
    kept: list[Applied] = []
    refused: list[Refused] = []
    data = encode(base.text)
    for a in applied:
        spans = [(e.start, e.end) for k in kept for e in k.edits]
        if any(x.start < e2 and s2 < x.end for x in a.edits for s2, e2 in spans):
            refused.append(Refused(a.move, "its edits overlap an earlier move's"))
            continue
        clash = next(((k.move, why) for k in kept if (why := _clash(k, a))), None)
        if clash is not None:
            refused.append(Refused(a.move, f"it and {clash[0]} cannot both hold: {clash[1]}"))
            continue
        try:
            tpl.check_defaults(tpl.compose(data, a.edits), base.text,
                               {k.name: k.default for k in a.knobs})
        except (PragmaError, tpl.MoveTemplateError) as exc:
            refused.append(Refused(a.move, f"its rewrite is wrong at its defaults ({exc})"))
            continue
        kept.append(a)
    template = tpl.compose(data, [e for a in kept for e in a.edits], base.macros)
    defaults = {k.name: k.default for a in kept for k in a.knobs}
    tpl.check_defaults(template, base.text, defaults)
    return template, kept, refused


def _clash(one: Applied, other: Applied) -> str:
    """Why two moves' launches cannot both hold ('' when they can)."""
    if one.block is not None and other.block is not None and \
            (one.swaps_block or other.swaps_block):
        return "one swaps the block's dimensions, the other sets the block"
    if (one.block is not None and not one.swaps_block and other.writes_block) or \
            (other.block is not None and not other.swaps_block and one.writes_block):
        return "one writes the block size into the source, the other searches it"
    return ""


def assemble(base: Base, applied: Sequence[Applied], name: str, note: str,
             include_dir: Path | None = None, budget: int | None = None
             ) -> tuple[Variant, list[Applied], list[Refused]]:
    """The moves variant: the composed template, the declared knobs (narrowed to fit `budget`
    points with the moves' knobs) and the moves' knobs, the grid coarsen recomputes. The
    variant's file lives elsewhere than the user's: a source that includes a header of its own
    folder gets `include_dir` (that folder) on its include path."""
    template, kept, refused = compose(base, applied)
    knobs = [k for a in kept for k in a.knobs]
    fixed = {n for a in kept for n in a.fixed}
    size = math.prod(len(k.values) for k in knobs)
    params = narrowed(base.params, fixed, budget // size if budget else None)
    params.update({k.name: {"default": k.default, "values": list(k.values),
                            **({"flag": k.flag} if k.flag else {})} for k in knobs})
    launch = launch_of(base.launch, kept)
    include = f"-I{include_dir}"
    local = _LOCAL_INCLUDE.search(base.text) is not None
    flags = (*base.flags, include) if local and include_dir and include not in base.flags \
        else base.flags
    overlay = {"params": params, "launch": launch, "kernel": {"flags": list(flags)}}
    return (Variant(name, base.filename + ".j2", template, overlay, ORIGIN, note), kept,
            refused)


def launch_of(launch: Mapping[str, Any], kept: Sequence[Applied]) -> dict[str, Any]:
    """The launch table with the kept moves' grid and block: a launch a move writes whole
    (coarsen's, split_reduction's, grid_size's grid; row_team's grid and block) first, then
    block_size's (the block size as a knob wherever it was written as a number, inside that
    grid too), so that they compose."""
    out = copy.deepcopy(dict(launch))
    knob_only = [a for a in kept if a.block is not None and a.grid is None]  # block_size
    for a in kept:
        if a.grid is not None:
            out["grid"] = list(a.grid)
            if a.block is not None:
                out["block"] = list(a.block)
    for a in knob_only:
        assert a.block is not None
        number = re.compile(rf"\b{out['block'][0].strip()}\b")
        out["grid"] = [number.sub(a.block[0], g) for g in out["grid"]]
        out["block"] = list(a.block)
    return out


def _tables(base: Base, params: dict[str, Any]) -> dict[str, Any]:
    return {"params": params, "launch": copy.deepcopy(base.launch),
            "kernel": {"flags": list(base.flags)}}


def narrowed(params: Mapping[str, Any], fixed: set[str], room: int | None) -> dict[str, Any]:
    """The declared parameters to search beside the moves' knobs: all their values when the
    product fits `room`, else each best value and its neighbours, else the best values only;
    `fixed` ones at their best values always."""
    table = {k: copy.deepcopy(v) for k, v in params.items()}
    def size(t: Mapping[str, Any]) -> int:
        return math.prod(len(v["values"]) for v in t.values() if isinstance(v, dict))
    for name in fixed:
        if isinstance(table.get(name), dict):
            table[name] = {**table[name], "values": [table[name]["default"]]}
    if room is None or size(table) <= room:
        return table
    for entry in table.values():
        if isinstance(entry, dict) and entry["default"] in entry["values"]:
            i = entry["values"].index(entry["default"])
            entry["values"] = entry["values"][max(0, i - 1):i + 2]
    if size(table) <= room:
        return table
    return {k: {**v, "values": [v["default"]]} if isinstance(v, dict) else v
            for k, v in table.items()}


def instance(variant: Variant, values: Mapping[str, ParamValue]) -> str:
    """A moves variant's source at `values`: plain text, its knobs instantiated."""
    return render_jinja(variant.source, dict(values), variant.filename)


def diff(before: str, after: str, name: str) -> str:
    """A unified diff of two sources, "" when they are the same."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        f"a/{name}", f"b/{name}"))


def try_moves(subject: Subject, moves: Sequence[Any]) -> list[Applied | Refused]:
    """Each move on the subject; a move that raises is refused with what it raised (a
    move's bug must never end a run)."""
    out: list[Applied | Refused] = []
    for m in moves:
        try:
            out.append(m.apply(subject))
        except (PragmaError, ValueError, KeyError, AttributeError, TypeError,
                AssertionError, IndexError, StopIteration) as exc:
            out.append(Refused(m.name, f"could not read this source ({type(exc).__name__}: "
                                       f"{exc})"))
    return out


def plain_source(variant: Variant, spec: TaskSpec, values: Mapping[str, ParamValue],
                 move_of: Mapping[str, str]) -> str:
    """The best kernel a user keeps: the moves' knobs instantiated, the declared `#define`
    knobs defined at their values, and a header saying which moves it took and how to build
    and launch it (`move_of`: knob -> move name)."""
    values = {**spec.default_params(), **values}
    knobs = [p for p in spec.params if p.name.startswith(KNOB_PREFIX)]
    taken = [f"{move_of.get(p.name, p.name)}={values[p.name]!r}" for p in knobs
             if values[p.name] != p.default]
    launch = baked({"grid": list(spec.launch.grid), "block": list(spec.launch.block)}, values)
    declared = {k: v for k, v in values.items() if not k.startswith(KNOB_PREFIX)}
    lines = [f"// {spec.kernel_name} rewritten by pragma-ncu's source moves",
             f"// moves taken: {', '.join(taken) or 'none (the source as written)'}",
             f"// nvcc flags: {' '.join(spec.compile_flags(values)) or '(none)'}",
             f"// launch: grid {launch['grid']}, block {launch['block']}, dynamic shared "
             f"memory {spec.launch.shared_mem}"]
    if declared:
        lines.append("// parameters: " + ", ".join(f"{k}={v}" for k, v in sorted(declared.items())))
    lines += [f"#define {k} {int(v) if isinstance(v, bool) else v}"
              for k, v in sorted(macro_params(spec, values, variant.source).items())]
    text = instance(variant, values)
    if spec.template_args:  # a C++ function template stays one: its instance is taken
        text += instantiation(spec.kernel_name, spec.template_args, values)
    return "\n".join(lines) + "\n" + text
