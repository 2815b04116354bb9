"""The one-thread-per-element shape that `coarsen` and `split_reduction` read, and the text
helpers both use to rewrite it:

    T i = blockIdx.x * blockDim.x + threadIdx.x;   (casts and operand order free)
    ... statements that do not use i ...
    if (i >= n) return;  ... the element's work ...      or      if (i < n) { ... }
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pragma_ncu.coder.moves import syntax as ts
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Edit, Node, Subject, decode

_CAST = re.compile(r"\((?:const)?(?:unsigned|signed)?(?:longlong|long|int|size_t|int64_t|"
                   r"uint64_t|int32_t|uint32_t|unsigned|ptrdiff_t)\)")
INDEX_FORMS = {"blockIdx.x*blockDim.x+threadIdx.x", "blockDim.x*blockIdx.x+threadIdx.x",
               "threadIdx.x+blockIdx.x*blockDim.x", "threadIdx.x+blockDim.x*blockIdx.x"}
FLIP = {">=": "<", ">": "<=", "<=": ">", "<": ">="}


@dataclass(frozen=True)
class Element:
    """The element index's declaration, its name, the `if` that guards it, and whether that
    `if` returns early (`if (i >= n) return;`) or holds the work (`if (i < n) { ... }`)."""

    decl: Node
    name: str
    guard: Node
    early: bool

    def work(self, body: Node) -> list[Node]:
        """The statements of the element's work: after the guard, or the guard's block."""
        if self.early:
            return [s for s in statements(body) if s.start_byte >= self.guard.end_byte]
        return [self.guard.child_by_field_name("consequence")]

    def in_range(self) -> str:
        """The condition under which the element is in range, as C text."""
        clause = self.guard.child_by_field_name("condition")
        inner = clause.child_by_field_name("value") or clause.named_children[0]
        if not self.early:
            return ts.text(inner)
        if inner.type == "binary_expression":
            op = ts.text(inner.child_by_field_name("operator"))
            left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
            if op in FLIP and ts.text(left) == self.name:
                return f"{self.name} {FLIP[op]} {ts.text(right)}"
        return f"!({ts.text(inner)})"


def element(subject: Subject) -> Element | str:
    """The kernel's element index and its guard, or why it has none."""
    stmts = statements(ts.body(subject.kernel))
    for k, decl in enumerate(stmts):
        name = index_name(decl)
        if name is None:
            continue
        later = [s for s in stmts[k + 1:] if ts.mentions(s, {name})]
        if not later or later[0].type != "if_statement" or \
                later[0].child_by_field_name("alternative") is not None:
            return f"{name} is not checked by an `if` (without else) before use"
        guard = later[0]
        early = _returns(guard.child_by_field_name("consequence"))
        if not early and len(later) > 1:
            return f"{name} is used after its guarded block"
        return Element(decl, name, guard, early)
    return "no `i = blockIdx.x * blockDim.x + threadIdx.x` element index at the top of the kernel"


def statements(block: Node) -> list[Node]:
    """A compound statement's statements, comments left out."""
    return [c for c in block.named_children if c.type != "comment"]


def index_name(decl: Node) -> str | None:
    """The name `decl` declares when it is the global element index, else None."""
    if decl.type != "declaration":
        return None
    inits = decl.children_by_field_name("declarator")
    if len(inits) != 1 or inits[0].type != "init_declarator":
        return None
    target = inits[0].child_by_field_name("declarator")
    value = ts.text(inits[0].child_by_field_name("value"))
    norm = _CAST.sub("", re.sub(r"\s+", "", value)).replace("(", "").replace(")", "")
    return ts.text(target) if target.type == "identifier" and norm in INDEX_FORMS else None


def _returns(node: Node | None) -> bool:
    if node is None:
        return False
    if node.type == "return_statement":
        return True
    return node.type == "compound_statement" and [c.type for c in statements(node)] == \
        ["return_statement"]


def indented(data: bytes, start: int, end: int, knob: str,
             skip: tuple[tuple[int, int], ...] = ()) -> list[Edit]:
    """One more level of indentation, where `knob` holds, for the lines that begin in
    [start, end), but those inside the `skip` spans (lines another edit takes out). Each edit
    replaces a line's leading whitespace, so that a line another move inserts above it (an
    unroll pragma, at the line's start) keeps to itself."""
    out = []
    pos = data.find(b"\n", start, end)
    while pos != -1 and pos + 1 < end:
        line = pos + 1
        stop = line
        while data[stop:stop + 1] in (b" ", b"\t"):
            stop += 1
        if data[stop:stop + 1] not in (b"\n", b"") and not any(s <= line < e for s, e in skip):
            lead = decode(data[line:stop])
            out.append(Edit(line, stop, tpl.when(knob, tpl.literal(lead + "    "), lead)))
        pos = data.find(b"\n", line, end)
    return out


def whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to its whole line (with its newline) when nothing else is on it."""
    line = data.rfind(b"\n", 0, start) + 1
    stop = data.find(b"\n", end)
    if data[line:start].strip() or (stop != -1 and data[end:stop].strip()):
        return start, end
    return line, (stop + 1 if stop != -1 else end)
