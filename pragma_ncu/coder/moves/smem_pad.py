"""smem_pad: pad the rows of a 2-D (or 3-D) `__shared__` array, `[R][C]` -> `[R][C + PAD]`.

Called for by shared-memory bank conflicts. A warp whose lanes read one column of a tile whose
rows are a multiple of 32 words long hits one bank 32 times; padding each row by one element
(two for 2-byte types) skews consecutive rows across the banks. Only arrays a warp walks by
column qualify (an index into the rows that varies with threadIdx.x), whose rows are not
skewed already, and that are used only element by element (`tile[i][j]`): a pointer into the
array or its `sizeof` would see the new layout. PAD = 0 is the source as written.
"""

from __future__ import annotations

import math

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject
from pragma_ncu.infra.errors import ExpressionError
from pragma_ncu.spec import expr

NAME = "smem_pad"
KNOB = "PNCU_SMEM_PAD"
VALUES = (0, 1, 2)
BANK_WORDS = 32

def apply(subject: Subject) -> Applied | Refused:
    arrays = [(a.name, a.decl, list(a.dims)) for a in ts.shared_arrays(subject.tree)
              if not a.extern and len(a.dims) >= 2]
    if not arrays:
        return Refused(NAME, "no __shared__ array of two or more dimensions")
    edits, sites, reasons = [], [], []
    for name, decl, dims in arrays:
        why = _unfit(subject, name, decl, dims)
        if why:
            reasons.append(f"{name}: {why}")
            continue
        last = dims[-1]
        size = ts.text(last)
        simple = last.type in ("number_literal", "identifier")
        on = tpl.literal(size if simple else f"({size})") + " + " + tpl.value(KNOB)
        edits.append(Edit(last.start_byte, last.end_byte, tpl.when(KNOB, on, size)))
        sites.append(f"{name}{''.join(f'[{ts.text(d)}]' for d in dims)} (line "
                     f"{ts.first_line(decl)})")
    if not edits:
        return Refused(NAME, "; ".join(reasons))
    return Applied(NAME, (Knob(KNOB, VALUES, 0),), tuple(edits), tuple(sites))


def _unfit(subject: Subject, name: str, decl: Node, dims: list[Node]) -> str:
    uses = [n for n in ts.walk(subject.tree) if n.type == "identifier" and ts.text(n) == name
            and not _declares(n, decl)]
    full = [u for u in uses if _full_subscript(u, len(dims))]
    if len(full) != len(uses):
        return "used other than element by element (padding would change what it sees)"
    varying = set().union(*(ts.lane_varying(ts.body(f)) for f in ts.functions(subject.tree)
                            if ts.body(f) is not None))
    if not any(_row_varies(u, len(dims), varying) for u in full):
        return "no access walks it by column across a warp's lanes"
    words = _row_words(subject, decl, dims[-1])
    if words is not None and math.gcd(words, BANK_WORDS) == 1:
        return "its rows are skewed across the banks already"
    return ""


def _declares(identifier: Node, decl: Node) -> bool:
    return decl.start_byte <= identifier.start_byte and identifier.end_byte <= decl.end_byte


def _full_subscript(identifier: Node, depth: int) -> bool:
    node = identifier
    for _ in range(depth):
        parent = node.parent
        if parent is None or parent.type != "subscript_expression" or \
                parent.child_by_field_name("argument") != node:
            return False
        node = parent
    return True


def _row_varies(identifier: Node, depth: int, varying: set[str]) -> bool:
    """An index before the last one varies across a warp's lanes."""
    subscripts, node = [], identifier
    for _ in range(depth):
        node = node.parent
        subscripts.append(node.child_by_field_name("indices") or node.named_children[-1])
    rows = subscripts[:-1]  # the outermost subscript is the last (column) index
    return any(ts.lane_dependent(s, varying) for s in rows)


def _row_words(subject: Subject, decl: Node, size: Node) -> int | None:
    """The length of a row in 4-byte words, when the element type and size are known."""
    type_name = ts.text(decl.child_by_field_name("type")).strip()
    item = ts.TYPE_BYTES.get(type_name)
    if item is None:
        return None
    try:
        columns = expr.evaluate_int(ts.text(size), subject.constants, "shared array size")
    except ExpressionError:
        return None
    return columns * item // 4 if columns * item % 4 == 0 else None


MOVE = Move(
    NAME, ("shared_bank_conflicts",),
    "pads each row of a shared tile that a warp reads by column, skewing rows across the "
    "banks", apply,
    knobs=(KNOB,),
    never="never pads an array used through a pointer or sizeof, or one whose rows are skewed")
