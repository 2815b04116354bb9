"""What a loop accumulates: the names its body updates by a sum (`acc += e`, `acc -= e`,
`acc = acc + e`, `++acc`) or by a minimum or maximum (`acc = fmaxf(acc, e)`, `max`, `fmin`,
..., `acc = e > acc ? e : acc`, `if (e > acc) acc = e;`), each read nowhere else in the loop,
so that the loop's iterations can be dealt out to several threads and their parts combined
afterwards (a sum by adding, a min or max by its own function). `split_reduction` and
`row_team` read their loops through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pragma_ncu.syntax import tree as ts
from pragma_ncu.syntax.loops import steps
from pragma_ncu.syntax.tree import Node

SUM = "+"
EXTREMA = ("fmaxf", "fminf", "fmax", "fmin", "max", "min")  # `max` and `min` are CUDA's
# overloads for every arithmetic type: the combination of a comparison written out
_LARGER = {">": "left", ">=": "left", "<": "right", "<=": "right"}  # the side a true test
# finds the larger
ARITHMETIC = frozenset({"float", "double", "int", "unsigned", "unsigned int", "long long",
                        "unsigned long long", "long long int", "int32_t", "uint32_t", "int64_t",
                        "uint64_t", "size_t"})  # the accumulator types a part can carry
_ZERO = re.compile(r"^\(?\s*(?:0+\.?0*|\.0+)(?:[eE][+-]?\d+)?[fFuUlL]*\s*\)?$")
EFFECTS = ("atomic", "printf", "asm", "__st")  # calls with effects beyond their value


@dataclass(frozen=True)
class Accumulator:
    """A name a loop accumulates into, declared before it: its declaration, type, how two
    parts combine (SUM or the min/max function) and its initial value (None: none written)."""

    name: str
    decl: Node  # its declaration statement
    type: str
    combine: str
    init: Node | None


@dataclass(frozen=True)
class Body:
    """What a loop's body does, read once: the names it updates (declared outside the body,
    each with the way it updates them: SUM, a min/max function, or None for any other
    change), the stores through pointers or into arrays, and what would keep its iterations
    from being dealt out (jumps out, calls with effects)."""

    updates: tuple[tuple[str, Node, str | None], ...]  # (name, the update, kind)
    stores: tuple[Node, ...]  # assignments and increments of memory or array elements
    jump: str  # "" or why the loop cannot be dealt out (a return, a break, a sync, ...)
    sanctioned: frozenset[int]  # identifier nodes where an accumulator may appear

    def combine(self) -> dict[str, str] | str:
        """name -> how its parts combine, or why some update is no sum, min or max."""
        out: dict[str, str] = {}
        for name, _, kind in self.updates:
            if kind is None or out.setdefault(name, kind) != kind:
                return f"{name} is changed in the loop other than by one sum, min or max"
        return out


def body_of(loop: Node) -> Body:
    """The loop's body as `Body` reads it (its step is not part of it)."""
    block = loop.child_by_field_name("body")
    stepping = steps(loop)
    local = {d for n in ts.walk(block) if n.type == "declaration" for d, _ in ts.declarators(n)}
    updates, stores, sanctioned = [], [], set()
    jump = ""
    for n in ts.walk(block):
        if n.type in ("return_statement", "goto_statement"):
            jump = jump or "the loop returns or jumps out"
        elif n.type == "break_statement" and not ts.enclosing(
                n, (*ts.LOOPS, "switch_statement"), loop):
            jump = jump or "the loop breaks out early: its iterations cannot be dealt out"
        elif n.type == "call_expression" and effects(n):
            jump = jump or "the loop synchronizes or has side effects (atomics, printf, asm)"
        target = ts.assigned(n)
        if target is None or any(ts.inside(n, x) for x in stepping):
            continue
        if target.type != "identifier":
            stores.append(n)
            continue
        name = ts.text(target)
        if name in local:
            continue
        kind = update_kind(n, name)
        test = _tested(n, name) if kind is None else None
        if test is not None:
            kind, condition = test
            sanctioned |= {m.id for m in ts.walk(condition)
                           if m.type == "identifier" and ts.text(m) == name}
        updates.append((name, n, kind))
        if kind is not None:
            sanctioned |= {target.id, *(m.id for m in _operand(n, name))}
    return Body(tuple(updates), tuple(stores), jump, frozenset(sanctioned))


def read_elsewhere(loop: Node, names: set[str], sanctioned: frozenset[int]) -> str:
    """The first of `names` the loop's body reads beyond accumulating it, or ""."""
    for n in ts.walk(loop.child_by_field_name("body")):
        if n.type == "identifier" and ts.text(n) in names and n.id not in sanctioned:
            return ts.text(n)
    return ""


def bounded_by(loop: Node, names: set[str]) -> bool:
    """The loop's condition or step reads one of `names`."""
    return ts.mentions(loop.child_by_field_name("condition"), names) or \
        any(ts.mentions(x, names) for x in steps(loop))


def accumulator(name: str, combine: str, decl: Node) -> Accumulator | str:
    """The accumulator `name` as its declaration `decl` declares it, or why it is no scalar
    of a plain arithmetic type."""
    type_text = " ".join(ts.text(decl.child_by_field_name("type")).split())
    node = dict(ts.declarators(decl))[name]
    declared = node.child_by_field_name("declarator") if node.type == "init_declarator" \
        else node
    if type_text not in ARITHMETIC or ts.text(declared) != name:
        return f"{name} is not a scalar of a plain arithmetic type ({type_text})"
    init = node.child_by_field_name("value") if node.type == "init_declarator" else None
    return Accumulator(name, decl, type_text, combine, init)


def update_kind(n: Node, name: str) -> str | None:
    """SUM or the min/max function of an update of `name`, None for any other. `name` is an
    identifier (`acc`) or an element written without spaces (`buf[tid]`, a tree's slot)."""
    if n.type == "update_expression":
        return SUM
    op = ts.text(n.child_by_field_name("operator"))
    right = n.child_by_field_name("right")
    if op in ("+=", "-="):
        return None if _holds(right, name) else SUM
    if op != "=":
        return None
    if right.type == "binary_expression" and ts.text(right.child_by_field_name("operator")) == \
            "+" and ts.compact(right.child_by_field_name("left")) == name and \
            not _holds(right.child_by_field_name("right"), name):
        return SUM
    if right.type == "conditional_expression":
        return _chosen(right.child_by_field_name("condition"), name,
                       right.child_by_field_name("consequence"),
                       right.child_by_field_name("alternative"))
    if right.type == "call_expression":
        fn = ts.text(right.child_by_field_name("function"))
        args = right.child_by_field_name("arguments").named_children
        if fn in EXTREMA and len(args) == 2 and sum(ts.compact(a) == name for a in args) == 1 \
                and sum(_holds(a, name) for a in args) == 1:
            return fn
    return None


def _holds(node: Node | None, name: str) -> bool:
    """`node` reads `name`: the identifier, or an expression written as `name` (no spaces)."""
    if name.isidentifier():
        return ts.mentions(node, {name})
    return node is not None and any(ts.compact(m) == name for m in ts.walk(node))


def _chosen(test: Node | None, name: str, taken: Node | None,
            other: Node | None) -> str | None:
    """"max" or "min" when `test ? taken : other` (or `if (test) name = taken;`, other being
    the name itself) keeps the larger or the smaller of `name` and one value, else None."""
    while test is not None and test.type == "parenthesized_expression" and test.named_children:
        test = test.named_children[0]
    if test is None or taken is None or other is None or test.type != "binary_expression":
        return None
    op = ts.text(test.child_by_field_name("operator"))
    sides = {s: ts.compact(test.child_by_field_name(s)) for s in ("left", "right")}
    pair = {ts.compact(taken), ts.compact(other)}
    if op not in _LARGER or set(sides.values()) != pair or name not in pair or len(pair) != 2:
        return None
    return "max" if ts.compact(taken) == sides[_LARGER[op]] else "min"


def _tested(n: Node, name: str) -> tuple[str, Node] | None:
    """`if (e > name) name = e;` (no else; braces or not): ("max" or "min", the test)."""
    statement = n.parent
    if statement is None or statement.type != "expression_statement":
        return None
    holder = statement.parent
    if holder is not None and holder.type == "compound_statement" and \
            len(ts.statements(holder)) == 1:
        holder = holder.parent
    if holder is None or holder.type != "if_statement" or \
            holder.child_by_field_name("alternative") is not None or \
            n.type != "assignment_expression" or ts.text(n.child_by_field_name("operator")) != "=":
        return None
    clause = holder.child_by_field_name("condition")
    test = clause.child_by_field_name("value") or clause.named_children[0]
    kind = _chosen(test, name, n.child_by_field_name("right"), n.child_by_field_name("left"))
    return (kind, test) if kind is not None else None


def _operand(n: Node, name: str) -> list[Node]:
    """The identifier nodes where an update reads the accumulator it writes."""
    if n.type != "assignment_expression" or ts.text(n.child_by_field_name("operator")) != "=":
        return []
    right = n.child_by_field_name("right")
    return [m for m in ts.walk(right) if m.type == "identifier" and ts.text(m) == name]


def is_zero(node: Node | None) -> bool:
    """`node` is a literal zero (`0`, `0.0f`, `0.`, `0e0`)."""
    return node is not None and _ZERO.match(ts.text(node)) is not None


def effects(node: Node) -> bool:
    """`node` calls something that synchronizes threads or has effects beyond its value."""
    return any(name.startswith((*ts.SYNCING, *EFFECTS)) for name in ts.call_names(node))
