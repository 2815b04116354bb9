"""The global thread index, read in one place: `blockIdx.x * blockDim.x + threadIdx.x` in any
operand order, with casts (`(long long)blockIdx.x * blockDim.x`, `static_cast<size_t>(...)`)
and parentheses, and the grid-stride step `i += gridDim.x * blockDim.x`; the same index along
the launch's other axes (`blockIdx.y * blockDim.y + threadIdx.y`) for 2-D and 3-D launches.
and parentheses, and the grid-stride step `i += gridDim.x * blockDim.x`; the reads of the
built-in indices in every dimension (`builtin_reads`); and a flat index split into two
coordinates by one divisor (`split_index`: `r = i % D; c = i / D;`).

Code is compared in its *normal form*: spaces, casts to integer types and parentheses taken
out. That form is only ever searched for these products, never evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pragma_ncu.syntax.functions import body
from pragma_ncu.syntax.memory import bare
from pragma_ncu.syntax.tree import Node, assigned, compact, declarators, statements, text, walk

_INTEGER = (r"(?:const)?(?:unsigned|signed)?(?:longlong|long|int|size_t|int64_t|uint64_t|"
            r"int32_t|uint32_t|unsigned|ptrdiff_t|std::size_t|std::int64_t)")
_CASTS = re.compile(rf"\({_INTEGER}\)|static_cast<{_INTEGER}>")
OFFSETS = ("blockIdx.x*blockDim.x", "blockDim.x*blockIdx.x")  # the first thread of the block


def index_forms(axis: str = "x") -> frozenset[str]:
    """The normal forms of the global index along `axis` ("x", "y", "z")."""
    offsets = (f"blockIdx.{axis}*blockDim.{axis}", f"blockDim.{axis}*blockIdx.{axis}")
    return frozenset({f"{o}+threadIdx.{axis}" for o in offsets}
                     | {f"threadIdx.{axis}+{o}" for o in offsets})


INDEX_FORMS = index_forms("x")
AXES = ("x", "y", "z")
STRIDES = ("+=gridDim.x*blockDim.x", "+=blockDim.x*gridDim.x")


def normal(code: str) -> str:
    """`code` with spaces, integer casts and parentheses taken out."""
    return _CASTS.sub("", re.sub(r"\s+", "", code)).replace("(", "").replace(")", "")


def is_global_index(node: Node | None) -> bool:
    """`node` is the global index expression itself."""
    return node is not None and normal(text(node)) in INDEX_FORMS


def axis_of(node: Node | None) -> str | None:
    """The axis ("x", "y" or "z") whose global index `node` is, None for any other code."""
    if node is None:
        return None
    form = normal(text(node))
    return next((axis for axis in AXES if form in index_forms(axis)), None)


def index_name(decl: Node) -> str | None:
    """The name `decl` declares when it is `T i = <the global index>;`, else None."""
    if decl.type != "declaration":
        return None
    inits = decl.children_by_field_name("declarator")
    if len(inits) != 1 or inits[0].type != "init_declarator":
        return None
    target = inits[0].child_by_field_name("declarator")
    if target.type == "identifier" and is_global_index(inits[0].child_by_field_name("value")):
        return text(target)
    return None


def block_offsets(code: str) -> int:
    """How often `code` (a function's text) computes the block's first thread, the
    `blockIdx.x * blockDim.x` of a global index."""
    form = normal(code)
    return sum(form.count(o) for o in OFFSETS)


def grid_strided(code: str) -> bool:
    """`code` walks its elements in a grid-stride loop, stepping by gridDim.x * blockDim.x:
    such a loop covers them whatever the grid and the block."""
    form = normal(code)
    return any(s in form for s in STRIDES)


# --- loops that threads share -------------------------------------------------------------------

def thread_place(node: Node | None, fn_body: Node | None = None) -> str | None:
    """What `node` (or the local it names, declared from it in `fn_body` and never changed)
    gives each thread: its place among STEP threads that share a loop, as the normal form of
    STEP: "blockDim.x" for threadIdx.x, "K" for threadIdx.x % K (or & (K - 1)),
    "gridDim.x*blockDim.x" for the global index; None for anything else."""
    if node is None:
        return None
    form = normal(text(node))
    if form == "threadIdx.x":
        return "blockDim.x"
    if form in INDEX_FORMS:
        return "gridDim.x*blockDim.x"
    for op, adjust in (("%", 0), ("&", 1)):
        head, _, tail = form.partition(op)
        if head == "threadIdx.x" and tail.isdigit():
            return str(int(tail) + adjust)
    if node.type == "identifier" and fn_body is not None:
        value = _single_value(fn_body, text(node))
        return thread_place(value) if value is not None else None
    return None


def same_step(place: str, step: Node, block: str | None = None) -> bool:
    """`step` strides by the number of threads that share the loop (`place`, as
    `thread_place` gives it; `block`, the spec's block size where it is a number, stands for
    blockDim.x)."""
    form = normal(text(step))
    places = {place, *(("blockDim.x*gridDim.x",) if place == "gridDim.x*blockDim.x" else ())}
    if block is not None and place == "blockDim.x":
        places.add(block)
    return form in places


def _single_value(fn_body: Node, name: str) -> Node | None:
    """The value `name` is declared with in `fn_body`, when it is declared once and never
    assigned after."""
    values = [n.child_by_field_name("value") for n in walk(fn_body) if n.type == "init_declarator"
              and text(n.child_by_field_name("declarator")) == name]
    changed = any((t := assigned(n)) is not None and text(t) == name for n in walk(fn_body))
    return values[0] if len(values) == 1 and not changed else None


# --- the built-in indices in every dimension ---------------------------------------------------

BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim")


def builtin_reads(node: Node) -> list[Node]:
    """The reads of a built-in index below `node` (`threadIdx.x`, `gridDim.y`, ...), in
    source order: field expressions whose argument is one of BUILTINS."""
    return [n for n in walk(node) if n.type == "field_expression" and
            text(n.child_by_field_name("argument")) in BUILTINS]


def builtins_whole(node: Node) -> list[Node]:
    """The built-in indices below `node` read whole, not through one of their fields
    (`dim3 t = threadIdx;`, `&blockIdx`)."""
    return [n for n in walk(node) if n.type == "identifier" and text(n) in BUILTINS and not (
        n.parent is not None and n.parent.type == "field_expression" and
        n.parent.child_by_field_name("argument") == n)]


# --- a flat index split into two coordinates -------------------------------------------------

@dataclass(frozen=True)
class Split:
    """A flat global index split into two coordinates by one divisor, in declarations at the
    top of the kernel (casts and either order free):

        T i = blockIdx.x * blockDim.x + threadIdx.x;
        T a = i % D;      the remainder: adjacent threads hold adjacent values of it
        T b = i / D;      the quotient: D adjacent threads share one value of it
    """

    index: str
    decl: Node  # the index's declaration
    remainder: str
    quotient: str
    modulo: Node  # `i % D`
    division: Node  # `i / D`
    divisor: Node  # D, as the remainder's declaration writes it


def split_index(kernel: Node) -> Split | str:
    """The kernel's flat index split by `%` and `/`, or why it has none."""
    stmts = statements(body(kernel))
    found = [(s, name) for s in stmts if (name := index_name(s)) is not None]
    if len(found) != 1:
        return ("no flat index `i = blockIdx.x * blockDim.x + threadIdx.x` declared once at "
                "the top of the kernel")
    decl, index = found[0]
    parts: dict[str, list[tuple[str, Node]]] = {"%": [], "/": []}
    for s in stmts:
        if s.type != "declaration":
            continue
        for name, d in declarators(s):
            value = d.child_by_field_name("value") if d.type == "init_declarator" else None
            split = _divided(value, index)
            if split is not None:
                parts[text(split.child_by_field_name("operator"))].append((name, split))
    if len(parts["%"]) != 1 or len(parts["/"]) != 1:
        return (f"{index} is not split into two coordinates by one `{index} % D` and one "
                f"`{index} / D` declared at the top of the kernel")
    (remainder, modulo), (quotient, division) = parts["%"][0], parts["/"][0]
    divisor = modulo.child_by_field_name("right")
    if compact(bare(divisor)) != compact(bare(division.child_by_field_name("right"))):
        return (f"{text(modulo)} and {text(division)} divide {index} by different numbers: "
                "not one index split into two coordinates")
    return Split(index, decl, remainder, quotient, modulo, division, divisor)


def _divided(value: Node | None, index: str) -> Node | None:
    """`value` (casts and parentheses aside) when it is `index % D` or `index / D`."""
    if value is None:
        return None
    node = bare(value)
    if node.type != "binary_expression" or \
            text(node.child_by_field_name("operator")) not in ("%", "/"):
        return None
    left = bare(node.child_by_field_name("left"))
    return node if left.type == "identifier" and text(left) == index else None
