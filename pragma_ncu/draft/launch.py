"""The launch a draft proposes: its grid and block as spec expressions, from the kernel's
indexing as `syntax.launch` reads it (one thread per element or row, V elements a thread, a
grid-stride loop, a warp per row, a block per output, a 2-D tile), with a comment that says
which shape it assumed; where it cannot tell a count, a placeholder that says what it could not
tell. The block is the kernel's `__launch_bounds__`, what its shared memory says, a block-size
knob, or a new parameter of 256 threads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pragma_ncu.infra.errors import ExpressionError
from pragma_ncu.spec import expr
from pragma_ncu.syntax import launch as shapes
from pragma_ncu.syntax.facts import CFunction, SourceFacts
from pragma_ncu.syntax.launch import LaunchShape, launch_shape

BLOCK_KNOBS = ("BLOCK", "BLOCK_SIZE", "BLOCK_DIM", "THREADS", "NTHREADS", "THREADS_PER_BLOCK")
_LAUNCH_NAMES = ("BLOCK", "BLOCK_SIZE", "PRAGMA_NCU_BLOCK")
_INT = re.compile(r"\(?\s*([+-]?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*\)?")
_NAME = re.compile(r"[A-Za-z_]\w*")
TILE_SIDE = "16"  # a 2-D tile's side where the kernel does not say


@dataclass(frozen=True)
class DraftLaunch:
    """The drafted launch: grid and block expressions (1 to 3 each), the comment on each, the
    shape assumed in words, and a block-size parameter the draft adds (name, default), if
    any."""

    grid: tuple[str, ...]
    block: tuple[str, ...]
    grid_note: str
    block_note: str
    shape: str
    new_param: tuple[str, int] | None = None


def draft_launch(fn: CFunction, facts: SourceFacts, params: set[str],
                 dims: dict[str, str]) -> DraftLaunch:
    """The launch of kernel `fn`: `params` are the draft's parameter names, `dims` maps each
    integer argument's C name to its dim's name in the spec."""
    shape = launch_shape(fn.body.parent) if fn.body is not None else LaunchShape(
        shapes.UNKNOWN, why="the kernel has no body")
    block, block_note, new_param = _block(fn, facts, params, shape)
    x = block[0]
    count = _count(shape.bound, dims, params)
    where = f" (line {shape.line})" if shape.line else ""
    if shape.kind == shapes.UNKNOWN:
        return DraftLaunch((f"ceil_div({placeholder('the element count')}, {x})",), block,
                           "GUESS: one thread per element of the first output: init could not "
                           f"tell ({shape.why})", block_note, shape.why, new_param)
    grid = _grid(shape, count, block, dims, params)
    guess = "GUESS: " if shape.guessed else ""
    return DraftLaunch(grid, block, f"{guess}{shape.why}{where}", block_note, shape.why,
                       new_param)


def placeholder(what: str) -> str:
    """A placeholder that says what is to be filled in (no `>` in it: it ends one)."""
    return f"<fill: {what.replace('>', ' greater than ')}>"


def _grid(shape: LaunchShape, count: str | None, block: tuple[str, ...],
          dims: dict[str, str], params: set[str]) -> tuple[str, ...]:
    x = block[0]
    told = count or placeholder(_unknown(shape.index, shape.bound))
    if shape.kind == shapes.TILE:
        told_y = _count(shape.bound_y, dims, params) or placeholder(
            _unknown(shape.index_y, shape.bound_y))
        y = block[1] if len(block) > 1 else x
        return (f"ceil_div({told}, {x})", f"ceil_div({told_y}, {y})")
    if shape.kind == shapes.BLOCK:
        return (told,)
    if shape.kind == shapes.WARP:
        return (f"ceil_div({_factor(told)} * {shapes.WARP_SIZE}, {x})",)
    per = f" * {shape.per_thread}" if shape.per_thread > 1 else ""
    return (f"ceil_div({told}, {x}{per})",)


def _unknown(index: str, bound: str | None) -> str:
    if bound is None:
        return f"how far {index} runs: no check of it found"
    return f"the value of {bound}, which {index} stays below"


def _factor(text: str) -> str:
    return text if _NAME.fullmatch(text) or text.startswith("<fill") else f"({text})"


def _count(bound: str | None, dims: dict[str, str], params: set[str]) -> str | None:
    """`bound` (C text) as a spec expression over the dims and parameters, or None where it
    names anything else (a local variable, an array element) or is not an expression."""
    if bound is None:
        return None
    names = set(_NAME.findall(bound))
    if not names <= set(dims) | params:
        return None
    spec = _NAME.sub(lambda m: dims.get(m.group(0), m.group(0)), bound).replace("/", "//")
    spec = spec.replace("////", "//")
    try:
        expr.parse(spec)
    except ExpressionError:
        return None
    return spec


def _block(fn: CFunction, facts: SourceFacts, params: set[str], shape: LaunchShape
           ) -> tuple[tuple[str, ...], str, tuple[str, int] | None]:
    """The launch's block: (expressions, reason, a new parameter or None)."""
    if shape.kind == shapes.TILE:
        side = shape.block[0] if shape.block else ""
        if side in params or _INT.fullmatch(side):
            return (side, side), f"the shared tile's side, {side} x {side} threads", None
        return (TILE_SIDE, TILE_SIDE), f"GUESS: {TILE_SIDE} x {TILE_SIDE} threads", None
    bound = (fn.launch_bounds or "").strip()
    if bound in params:
        return (bound,), f"GUESS: __launch_bounds__({bound}), the kernel's own block size", None
    literal = _INT.fullmatch(bound) or _INT.fullmatch(facts.macro(bound) or "")
    if bound and literal:
        value = int(literal.group(1), 0)
        return (str(value),), f"GUESS: __launch_bounds__({bound}) = {value} threads", None
    hint = shape.block[0] if shape.block else ""
    if hint in params or _INT.fullmatch(hint):
        return (hint,), (f"GUESS: the shared array the block's threads index holds {hint}: "
                         "one thread each"), None
    knob = next((n for n in BLOCK_KNOBS if n in params), None)
    if knob is not None:
        return (knob,), f"GUESS: the knob {knob} is the block size", None
    name = next(n for n in _LAUNCH_NAMES if n not in facts.identifiers and n not in params)
    return (name,), "GUESS: 256 threads per block", (name, 256)
