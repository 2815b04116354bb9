"""The one-thread-per-element shape (`coarsen` and `split_reduction` rewrite it; `init` and
the row readers read it):

    T i = blockIdx.x * blockDim.x + threadIdx.x;   (casts and operand order free)
    ... statements that do not use i ...
    if (i >= n) return;  ... the element's work ...      or      if (i < n) { ... }

and the guard of any coordinates (`guard_of`: the `if`s that keep threads off what is out of
range, and the upper bound each puts on a name); and its two-dimensional form, a thread per
element (x, y) of a 2-D launch (`smem_tile` reads it):

    T x = blockIdx.x * blockDim.x + threadIdx.x;   (one declaration or two, any order)
    T y = blockIdx.y * blockDim.y + threadIdx.y;
    ... declarations ...
    if (x >= N || y >= M) return;  ... the work ...     (or several such returns in a row)
    or      if (x < N && y < M) { ... the work ... }
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.syntax.functions import body
from pragma_ncu.syntax.index import axis_of, index_name
from pragma_ncu.syntax.memory import bare
from pragma_ncu.syntax.tree import Node, inside, mentions, statements, text

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


@dataclass(frozen=True)
class Guard:
    """The `if`s at the top of a kernel that keep its threads off what is out of range: the
    first one that tests some names, and where it returns early (`if (r >= R) return;`) the
    early returns right after it; else the one `if` whose block holds the work."""

    ifs: tuple[Node, ...]
    early: bool

    def conditions(self) -> list[Node]:
        return [_condition(g) for g in self.ifs]

    def covers(self, node: Node, fn_body: Node) -> bool:
        """`node` runs only where the guard lets a thread through."""
        last = self.ifs[-1]
        if self.early:
            return last.end_byte <= node.start_byte and node.end_byte <= fn_body.end_byte
        return inside(node, last.child_by_field_name("consequence"))

    def bounds(self) -> dict[str, Node] | str:
        """name -> the upper bound the guard puts on it (`a < D` or `D > a` joined by `&&`;
        `a >= D` or `D <= a` joined by `||` where it returns early), or why a test of the
        guard is no such bound (or a name has two)."""
        join, below = ("||", (">=", "<=")) if self.early else ("&&", ("<", ">"))
        out: dict[str, Node] = {}
        pending = self.conditions()
        while pending:
            n = bare(pending.pop())
            op = text(n.child_by_field_name("operator")) if n.type == "binary_expression" \
                else ""
            if op == join:
                pending += [n.child_by_field_name("left"), n.child_by_field_name("right")]
                continue
            sides = [n.child_by_field_name(s) for s in ("left", "right")] if op in below \
                else []
            name, bound = (bare(sides[0]), sides[1]) if op == below[0] else \
                (bare(sides[1]), sides[0]) if sides else (None, None)
            if name is None or bound is None or name.type != "identifier":
                return (f"the guard's test {text(n)} is not an upper bound on a name "
                        f"(comparisons joined by {join})")
            if text(name) in out:
                return f"the guard bounds {text(name)} twice"
            out[text(name)] = bound
        return out


def guard_of(fn_body: Node, names: set[str]) -> Guard | None:
    """The guard of `names`: the first `if` (without else) of the body's top level that tests
    one of them, with the early returns that follow it at once."""
    stmts = statements(fn_body)
    first = next((k for k, s in enumerate(stmts) if s.type == "if_statement" and
                  mentions(s.child_by_field_name("condition"), names)), None)
    if first is None or stmts[first].child_by_field_name("alternative") is not None:
        return None
    ifs = [stmts[first]]
    early = only_returns(ifs[0].child_by_field_name("consequence"))
    for after in stmts[first + 1:] if early else ():
        if after.type != "if_statement" or after.child_by_field_name("alternative") is not None \
                or not only_returns(after.child_by_field_name("consequence")) or \
                not mentions(after.child_by_field_name("condition"), names):
            break
        ifs.append(after)
    return Guard(tuple(ifs), early)


def _condition(guard: Node) -> Node:
    clause = guard.child_by_field_name("condition")
    return clause.child_by_field_name("value") or clause.named_children[0]


# --- a thread per element of a plane ---------------------------------------------------------

@dataclass(frozen=True)
class Index:
    """A global index the kernel declares: its name, the launch axis it runs along, the
    declaration it stands in and its value (the index expression)."""

    name: str
    axis: str
    decl: Node
    value: Node


@dataclass(frozen=True)
class Plane:
    """A thread's element (x, y): the global indices along the launch's first two axes (`lane`
    along x, whose adjacent values adjacent threads of a warp take; `row` along y), the `if`s
    that guard both (early returns in a row, or one `if` holding the work), and the
    declarations between the indices and the guard."""

    lane: Index
    row: Index
    guards: tuple[Node, ...]
    early: bool
    prologue: tuple[Node, ...]  # the statements from the first index's to the guard's

    @property
    def names(self) -> set[str]:
        return {self.lane.name, self.row.name}

    def work(self, block: Node) -> list[Node]:
        """The statements of the element's work: after the guards, or in the guard's block."""
        if self.early:
            return [s for s in statements(block) if s.start_byte >= self.guards[-1].end_byte]
        inner = self.guards[0].child_by_field_name("consequence")
        return statements(inner) if inner.type == "compound_statement" else [inner]

    def in_range(self) -> str:
        """The condition under which the element is in range, as C text."""
        tests = [_condition(g) for g in self.guards]
        if not self.early:
            return text(tests[0])
        return " && ".join(f"!({text(t)})" for t in tests)


def plane(kernel: Node) -> Plane | str:
    """The kernel's two global indices and their guard, or why it has none."""
    stmts = statements(body(kernel))
    found: dict[str, Index] = {}
    for s in (s for s in stmts if s.type == "declaration"):
        for d in s.children_by_field_name("declarator"):
            target, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
            axis = axis_of(value) if d.type == "init_declarator" else None
            if axis is None or target.type != "identifier":
                continue
            if axis in found:
                return f"two global indices along {axis} ({found[axis].name}, {text(target)})"
            found[axis] = Index(text(target), axis, s, value)
    if "x" not in found or "y" not in found:
        return ("no pair of global indices `x = blockIdx.x * blockDim.x + threadIdx.x`, `y = "
                "blockIdx.y * blockDim.y + threadIdx.y` declared in the kernel's body")
    lane, row = found["x"], found["y"]
    first = min(stmts.index(lane.decl), stmts.index(row.decl))
    last = max(stmts.index(lane.decl), stmts.index(row.decl))
    names = {lane.name, row.name}
    k = next((k for k in range(last + 1, len(stmts)) if stmts[k].type != "declaration"), None)
    if k is None or stmts[k].type != "if_statement":
        return (f"{lane.name} and {row.name} are not checked by an `if` right after the "
                "declarations that follow them")
    guards = [stmts[k]]
    early = only_returns(stmts[k].child_by_field_name("consequence"))
    while early and k + 1 < len(stmts) and stmts[k + 1].type == "if_statement" and \
            only_returns(stmts[k + 1].child_by_field_name("consequence")):
        k += 1
        guards.append(stmts[k])
    if any(g.child_by_field_name("alternative") is not None for g in guards):
        return "the guard has an else"
    if not all(any(mentions(_condition(g), {n}) for g in guards) for n in names):
        return f"the guard does not bound both {lane.name} and {row.name}"
    if not early and any(mentions(s, names) for s in stmts[k + 1:]):
        return f"{lane.name} or {row.name} is used after the guarded block"
    return Plane(lane, row, tuple(guards), early, tuple(stmts[first:stmts.index(guards[0])]))
