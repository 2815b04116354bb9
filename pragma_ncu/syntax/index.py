"""The global thread index, read in one place: `blockIdx.x * blockDim.x + threadIdx.x` in any
operand order, with casts (`(long long)blockIdx.x * blockDim.x`, `static_cast<size_t>(...)`)
and parentheses, and the grid-stride step `i += gridDim.x * blockDim.x`; the same index along
the launch's other axes (`blockIdx.y * blockDim.y + threadIdx.y`) for 2-D and 3-D launches.

Code is compared in its *normal form*: spaces, casts to integer types and parentheses taken
out. That form is only ever searched for these products, never evaluated.
"""

from __future__ import annotations

import re

from pragma_ncu.syntax.tree import Node, assigned, text, walk

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
