"""The one-thread-per-element shape (`coarsen` and `split_reduction` rewrite it; `init` and
the row readers read it):

    T i = blockIdx.x * blockDim.x + threadIdx.x;   (casts and operand order free)
    ... statements that do not use i ...
    if (i >= n) return;  ... the element's work ...      or      if (i < n) { ... }
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.syntax.functions import body
from pragma_ncu.syntax.index import index_name
from pragma_ncu.syntax.tree import Node, mentions, statements, text

FLIP = {">=": "<", ">": "<=", "<=": ">", "<": ">="}


@dataclass(frozen=True)
class Element:
    """The element index's declaration, its name, the `if` that guards it, and whether that
    `if` returns early (`if (i >= n) return;`) or holds the work (`if (i < n) { ... }`)."""

    decl: Node
    name: str
    guard: Node
    early: bool

    def work(self, block: Node) -> list[Node]:
        """The statements of the element's work: after the guard, or the guard's block."""
        if self.early:
            return [s for s in statements(block) if s.start_byte >= self.guard.end_byte]
        return [self.guard.child_by_field_name("consequence")]

    def in_range(self) -> str:
        """The condition under which the element is in range, as C text."""
        clause = self.guard.child_by_field_name("condition")
        inner = clause.child_by_field_name("value") or clause.named_children[0]
        if not self.early:
            return text(inner)
        if inner.type == "binary_expression":
            op = text(inner.child_by_field_name("operator"))
            left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
            if op in FLIP and text(left) == self.name:
                return f"{self.name} {FLIP[op]} {text(right)}"
        return f"!({text(inner)})"


def element(kernel: Node) -> Element | str:
    """The kernel's element index and its guard, or why it has none."""
    stmts = statements(body(kernel))
    for k, decl in enumerate(stmts):
        name = index_name(decl)
        if name is None:
            continue
        later = [s for s in stmts[k + 1:] if mentions(s, {name})]
        if not later or later[0].type != "if_statement" or \
                later[0].child_by_field_name("alternative") is not None:
            return f"{name} is not checked by an `if` (without else) before use"
        guard = later[0]
        early = only_returns(guard.child_by_field_name("consequence"))
        if not early and len(later) > 1:
            return f"{name} is used after its guarded block"
        return Element(decl, name, guard, early)
    return "no `i = blockIdx.x * blockDim.x + threadIdx.x` element index at the top of the kernel"


def only_returns(node: Node | None) -> bool:
    """`node` is a `return;` (alone, or alone in braces): an `if` that returns early."""
    if node is None:
        return False
    if node.type == "return_statement":
        return True
    return node.type == "compound_statement" and [c.type for c in statements(node)] == \
        ["return_statement"]
