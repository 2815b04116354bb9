"""How a kernel's threads map onto its work, read from its indexing: what `init` drafts a launch
from. The shapes, first match wins:

- a 2-D tile: global indices along x and y (`blockIdx.y * blockDim.y + threadIdx.y`), checked
  together (`if (row < rows && col < cols)`);
- a grid-stride loop: `for (i = <global index>; i < n; i += gridDim.x * blockDim.x)`;
- one warp per row: the global index divided by 32 (`/ warpSize`, `>> 5`), or `blockIdx.x *
  (blockDim.x / 32) + threadIdx.x / 32`;
- one thread per element, or per V elements when the index is scaled (`(...) * 4`) or the
  check is (`i * 4 < n`): `i = <global index>` checked against its bound (`if (i < n)` or
  `if (i >= n) return;`); a loop in the checked work makes it one thread per row;
- one block per output: `o = blockIdx.x`, the block's threads striding over its work
  (`for (c = threadIdx.x; c < cols; c += blockDim.x)`).

The bound is what the index stays below, as C text with its casts dropped; where no check
says it, a 1-D block's count is guessed from the kernel's integer arguments (the one its
threads do not stride over), and said to be a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pragma_ncu.syntax.element import only_returns
from pragma_ncu.syntax.functions import body, parameters
from pragma_ncu.syntax.index import index_forms, is_global_index, normal
from pragma_ncu.syntax.memory import shared_arrays
from pragma_ncu.syntax.tree import LOOPS, Node, line_of, substituted, text, walk

ELEMENT, ROW, STRIDED, WARP, BLOCK, TILE, UNKNOWN = (
    "element", "row", "grid-stride", "warp", "block", "tile", "unknown")
WARP_SIZE = 32
_WARP = re.compile(r"(?:/32|/warpSize|>>5)$")
_INTEGER_TYPES = re.compile(r"\b(?:int|long|short|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t|"
                            r"unsigned)\b")
_IN_RANGE = {"<": "left", ">": "right"}  # `i < B` or `B > i`: the index on that side
_OUT_OF_RANGE = {">=": "left", "<=": "right"}  # `i >= B` or `B <= i`


@dataclass(frozen=True)
class LaunchShape:
    """How the kernel's threads cover its work: the `kind` (ELEMENT, ROW, STRIDED, WARP,
    BLOCK, TILE or UNKNOWN), the index variable, the C text of what it stays below (`bound`,
    None where nothing says; `guessed` where it was inferred, not read), the elements a
    thread takes (`per_thread`), a tile's y index and bound, what the kernel's shared memory
    says of the block's threads (`block`: one size a dimension, as written, or ()), the
    line the shape is read at, and `why` in words."""

    kind: str
    index: str = ""
    bound: str | None = None
    per_thread: int = 1
    index_y: str = ""
    bound_y: str | None = None
    block: tuple[str, ...] = ()
    guessed: bool = False
    line: int = 0
    why: str = ""


def launch_shape(fn: Node) -> LaunchShape:
    """The launch shape of the kernel `fn` (a function_definition)."""
    code = body(fn)
    if code is None:
        return LaunchShape(UNKNOWN, why="the kernel has no body")
    indices = _indices(code)
    for read in (_tile, _strided, _warp, _element, _block):
        shape = read(fn, code, indices)
        if shape is not None:
            return shape
    return LaunchShape(UNKNOWN, why="no index of blockIdx and threadIdx that init reads (a "
                       "global index, a warp's, a block's)")


@dataclass(frozen=True)
class _Index:
    """A variable declared from the thread's coordinates: its kind ("x", "y", "z" for a
    global index along that axis, "warp", "block"), the elements a thread takes, the line."""

    name: str
    kind: str
    per_thread: int
    line: int
    decl: Node


def _indices(code: Node) -> list[_Index]:
    out = []
    for decl in walk(code):
        if decl.type != "declaration":
            continue
        inits = decl.children_by_field_name("declarator")
        if len(inits) != 1 or inits[0].type != "init_declarator":
            continue
        target, value = (inits[0].child_by_field_name(f) for f in ("declarator", "value"))
        if target is None or target.type != "identifier" or value is None:
            continue
        kind, per = _index_kind(value)
        if kind:
            out.append(_Index(text(target), kind, per, line_of(decl), decl))
    return out


def _index_kind(value: Node) -> tuple[str, int]:
    """What an initializer computes of the thread's coordinates: ("x", 1) for the global
    index, ("x", 4) for it times 4, ("warp", 1), ("block", 1), or ("", 1)."""
    for axis in "xyz":
        if normal(text(value)) in index_forms(axis):
            return axis, 1
    inner = _unwrapped(value)
    if inner.type == "binary_expression" and text(inner.child_by_field_name("operator")) == "*":
        left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
        for index, scale in ((left, right), (right, left)):
            if is_global_index(_unwrapped(index)) and _number(scale) is not None:
                return "x", _number(scale) or 1
    form = normal(text(value))
    if "threadIdx.x" in form and "blockIdx.x" in form and (
            _WARP.search(form) or "threadIdx.x/32" in form or "threadIdx.x/warpSize" in form):
        return "warp", 1
    if form == "blockIdx.x":
        return "block", 1
    return "", 1


def _unwrapped(node: Node) -> Node:
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _number(node: Node | None) -> int | None:
    if node is None or node.type != "number_literal":
        return None
    try:
        return int(text(node).rstrip("uUlL"), 0)
    except ValueError:
        return None


# --- the shapes ---------------------------------------------------------------------------

def _tile(fn: Node, code: Node, indices: list[_Index]) -> LaunchShape | None:
    xs = [i for i in indices if i.kind == "x" and i.per_thread == 1]
    ys = [i for i in indices if i.kind == "y"]
    if not xs or not ys:
        return None
    x, y = xs[0], ys[0]
    bound_x, bound_y = _bound(code, x.name)[0], _bound(code, y.name)[0]
    return LaunchShape(TILE, x.name, bound_x, 1, y.name, bound_y, _tile_block(code),
                       line=min(x.line, y.line),
                       why=f"a 2-D tile: {x.name} over x ({_below(x.name, bound_x)}), "
                           f"{y.name} over y ({_below(y.name, bound_y)})")


def _strided(fn: Node, code: Node, indices: list[_Index]) -> LaunchShape | None:
    names = {i.name for i in indices if i.kind == "x"}
    for loop in walk(code):
        if loop.type != "for_statement":
            continue
        update = loop.child_by_field_name("update")
        if update is None or "gridDim.x" not in text(update):
            continue
        variable = _loop_variable(loop, names)
        if variable is None:
            continue
        bound = _compared(loop.child_by_field_name("condition"), variable, _IN_RANGE)
        return LaunchShape(STRIDED, variable, bound, line=line_of(loop),
                           why=f"a grid-stride loop over {_below(variable, bound)}: any grid "
                               "covers it")
    return None


def _loop_variable(loop: Node, indices: set[str]) -> str | None:
    """The variable a loop starts at the global index (declared there or named in `indices`)."""
    init = loop.child_by_field_name("initializer")
    if init is None:
        return None
    if init.type == "declaration":
        inits = init.children_by_field_name("declarator")
        if len(inits) == 1 and inits[0].type == "init_declarator":
            value = inits[0].child_by_field_name("value")
            target = inits[0].child_by_field_name("declarator")
            if value is not None and target is not None and (
                    is_global_index(value) or text(value) in indices):
                return text(target)
    if init.type == "assignment_expression":
        right = init.child_by_field_name("right")
        if right is not None and (is_global_index(right) or text(right) in indices):
            return text(init.child_by_field_name("left"))
    return None


def _warp(fn: Node, code: Node, indices: list[_Index]) -> LaunchShape | None:
    warp = next((i for i in indices if i.kind == "warp"), None)
    if warp is None:
        return None
    bound, _, _ = _bound(code, warp.name)
    return LaunchShape(WARP, warp.name, bound, line=warp.line,
                       why=f"one warp per row ({_below(warp.name, bound)}): {WARP_SIZE} "
                           "threads each")


def _element(fn: Node, code: Node, indices: list[_Index]) -> LaunchShape | None:
    index = next((i for i in indices if i.kind == "x"), None)
    if index is None:
        return None
    bound, scale, guard = _bound(code, index.name)
    per = index.per_thread * scale
    looped = guard is not None and any(n.type in LOOPS for n in _guarded(code, guard))
    kind = ROW if looped and per == 1 else ELEMENT
    what = (f"one thread per {index.name}, looping over its work" if kind == ROW else
            "one thread per element" if per == 1 else f"one thread per {per} elements")
    return LaunchShape(kind, index.name, bound, per, line=index.line,
                       why=f"{what} ({_below(index.name, bound)})")


def _block(fn: Node, code: Node, indices: list[_Index]) -> LaunchShape | None:
    index = next((i for i in indices if i.kind == "block"), None)
    if index is None:
        return None
    bound, _, _ = _bound(code, index.name)
    guessed = False
    if bound is None:
        bound = _unstrided_dim(fn, code)
        guessed = bound is not None
    said = (f"{index.name} < {bound}: the integer argument its threads do not stride over"
            if guessed else _below(index.name, bound))
    return LaunchShape(BLOCK, index.name, bound, block=_shared_block(code), guessed=guessed,
                       line=index.line,
                       why=f"one block per output ({index.name} = blockIdx.x, {said}), its "
                           "threads sharing the work")


# --- bounds ---------------------------------------------------------------------------------

def _bound(code: Node, name: str) -> tuple[str | None, int, Node | None]:
    """What `name` stays below, the factor it is scaled by in the check (`i * 4 < n`: 4), and
    the `if` that checks it; (None, 1, None) where no `if` does."""
    for node in walk(code):
        if node.type != "if_statement" or node.child_by_field_name("alternative") is not None:
            continue
        clause = node.child_by_field_name("condition")
        condition = clause.child_by_field_name("value") or clause.named_children[0] \
            if clause is not None and clause.named_children else None
        if condition is None:
            continue
        early = only_returns(node.child_by_field_name("consequence"))
        joined, compared = ("||", _OUT_OF_RANGE) if early else ("&&", _IN_RANGE)
        for part in _conjuncts(condition, joined):
            for scale in (1, *_scales(part, name)):
                bound = _compared(part, name, compared, scale)
                if bound is not None:
                    return bound, scale, node
    return None, 1, None


def _conjuncts(node: Node, op: str) -> list[Node]:
    node = _unwrapped(node)
    if node.type == "binary_expression" and text(node.child_by_field_name("operator")) == op:
        return (_conjuncts(node.child_by_field_name("left"), op)
                + _conjuncts(node.child_by_field_name("right"), op))
    return [node]


def _scales(part: Node, name: str) -> list[int]:
    """The factors `name` is multiplied by on a side of the comparison `part`."""
    found = []
    for n in walk(part):
        if n.type == "binary_expression" and text(n.child_by_field_name("operator")) == "*":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            for a, b in ((left, right), (right, left)):
                if _unwrapped(a).type == "identifier" and text(_unwrapped(a)) == name \
                        and _number(b) is not None:
                    found.append(_number(b) or 1)
    return found


def _compared(node: Node | None, name: str, sides: dict[str, str],
              scale: int = 1) -> str | None:
    """B when `node` compares `name` (times `scale`) with B as `sides` says, else None."""
    if node is None:
        return None
    node = _unwrapped(node)
    if node.type != "binary_expression":
        return None
    side = sides.get(text(node.child_by_field_name("operator")))
    if side is None:
        return None
    index = _unwrapped(node.child_by_field_name(side))
    other = node.child_by_field_name("right" if side == "left" else "left")
    if not _is_scaled(index, name, scale):
        return None
    return without_casts(other)


def _is_scaled(node: Node, name: str, scale: int) -> bool:
    if scale == 1:
        return node.type == "identifier" and text(node) == name
    if node.type != "binary_expression" or text(node.child_by_field_name("operator")) != "*":
        return False
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    return any(_unwrapped(a).type == "identifier" and text(_unwrapped(a)) == name
               and _number(b) == scale for a, b in ((left, right), (right, left)))


def without_casts(node: Node) -> str:
    """`node`'s text with C casts dropped (`(long long)rows * cols`: `rows * cols`), on one
    line."""
    replace = {}
    for n in walk(node):
        if n.type == "cast_expression":
            replace[n.id] = without_casts(n.child_by_field_name("value"))
        elif n.type == "call_expression" and text(n.child_by_field_name("function")).startswith(
                "static_cast"):
            args = n.child_by_field_name("arguments")
            if args is not None and args.named_children:
                replace[n.id] = without_casts(args.named_children[0])
    return " ".join(substituted(node, replace).split())


def _below(name: str, bound: str | None) -> str:
    return f"{name} < {bound}" if bound is not None else f"no check of {name} found"


def _guarded(code: Node, guard: Node) -> list[Node]:
    """The nodes of the work a guard admits: its consequence, or after an early return."""
    if only_returns(guard.child_by_field_name("consequence")):
        return [n for n in walk(code) if n.start_byte >= guard.end_byte]
    return list(walk(guard.child_by_field_name("consequence")))


# --- the block's threads ----------------------------------------------------------------------

def _unstrided_dim(fn: Node, code: Node) -> str | None:
    """The one integer argument the block's thread-stride loops (`c = threadIdx.x; c < cols;
    c += blockDim.x`) do not bound: the count of blocks, when there is exactly one."""
    strided = set()
    for loop in walk(code):
        if loop.type == "for_statement" and "blockDim.x" in text(
                loop.child_by_field_name("update") or loop) and "threadIdx.x" in text(
                loop.child_by_field_name("initializer") or loop):
            condition = loop.child_by_field_name("condition")
            strided |= {text(n) for n in walk(condition) if n.type == "identifier"} \
                if condition is not None else set()
    integers = [_param_name(p) for p in parameters(fn) if _is_integer_scalar(p)]
    left = [n for n in integers if n and n not in strided]
    return left[0] if strided and len(left) == 1 else None


def _is_integer_scalar(param: Node) -> bool:
    declarator = param.child_by_field_name("declarator")
    return (declarator is not None and declarator.type == "identifier"
            and bool(_INTEGER_TYPES.search(text(param.child_by_field_name("type")))))


def _param_name(param: Node) -> str:
    declarator = param.child_by_field_name("declarator")
    return text(declarator) if declarator is not None else ""


def _shared_block(code: Node) -> tuple[str, ...]:
    """The block size a 1-D shared array indexed by threadIdx.x says (`part[256]`)."""
    for array in shared_arrays(code):
        if len(array.dims) == 1 and _indexed_by_thread(code, array.name):
            return (without_casts(array.dims[0]),)
    return ()


def _tile_block(code: Node) -> tuple[str, ...]:
    """A 2-D tile's block from its shared tile (`tile[TILE][TILE + 1]`: TILE x TILE)."""
    for array in shared_arrays(code):
        if len(array.dims) == 2 and _indexed_by_thread(code, array.name):
            side = without_casts(array.dims[0])
            return (side, side)
    return ()


def _indexed_by_thread(code: Node, name: str) -> bool:
    return any(n.type == "subscript_expression" and text(n.child_by_field_name("argument"))
               .split("[")[0] == name and "threadIdx" in text(n) for n in walk(code))
