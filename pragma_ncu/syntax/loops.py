"""How a loop steps its variables: which it steps once an iteration, by how much, where each
starts, and the bound that ends it. A loop read here runs over a sequence of steps that stops
once its condition fails, so its iterations can be dealt out: a thread that starts p steps on
and strides SPLIT times as far takes every SPLIT-th of them (`split_reduction`).

    for (T r = A; r < B; ++r)            `r++`, `r += S`, `<=`, counting down with `>`, `>=`
    for (...; r < B; ++r, p += n)        several variables stepped at once
    while (r < B) { ...; p += n; r += S; }   stepped by the body's last statements
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.syntax import tree as ts
from pragma_ncu.syntax.tree import Node


@dataclass(frozen=True)
class Induction:
    """A variable the loop steps once an iteration: `++r`, `r += S`, `--r`, `p += stride`."""

    name: str
    sign: str  # "+" or "-"
    step: str  # as written ("1" for ++ and --)
    update: Node  # the update (each part steps SPLIT times as far)
    start: Node | None  # its value in the loop's header, or None: it starts where it stands
    # before the loop, and part p moves it p steps on first


FORM = ("the loop is not one whose iterations can be dealt out: `for (T r = A; r < B; "
        "r += S)` (`++r`, `<=`, counting down with `>`; other variables stepped beside r in "
        "its update), or `while (r < B) { ...; r += S; }` (other variables stepped in the "
        "statements just before)")
UP, DOWN = {"<": "left", "<=": "left", ">": "right", ">=": "right"}, \
    {">": "left", ">=": "left", "<": "right", "<=": "right"}


def inductions(loop: Node) -> tuple[Induction, ...] | str:
    """The variables the loop steps, and where each starts; the condition must compare one of
    them with a bound the loop does not change, in the direction it steps, so that the
    iterations are a run that ends once the condition fails (parts may take every SPLIT-th)."""
    if loop.type == "for_statement":
        updates = _updates(loop.child_by_field_name("update"))
        condition = loop.child_by_field_name("condition")
    elif loop.type == "while_statement":
        body = loop.child_by_field_name("body")
        updates = [u for statement in _trailing_steps(body) for u in
                   _updates(statement.named_children[0]) or ()] or None
        clause = loop.child_by_field_name("condition")
        condition = clause.child_by_field_name("value") or clause.named_children[0]
        if any(n.type == "continue_statement" and not ts.enclosing(n, ts.LOOPS, loop)
               for n in ts.walk(body)):
            return "the while loop continues past its step"
    else:
        return FORM
    if not updates or condition is None or condition.type != "binary_expression":
        return FORM
    parsed = [_stepped(u) for u in updates]
    stepped = [x for x in parsed if x is not None]
    names = {name for name, _, _ in stepped}
    if len(stepped) != len(updates) or len(names) != len(stepped) or \
            any(ts.mentions(step_of(u), names) for u in updates):
        return FORM
    op = ts.text(condition.child_by_field_name("operator"))
    sides = {"left": condition.child_by_field_name("left"),
             "right": condition.child_by_field_name("right")}
    sign = {name: sg for name, sg, _ in stepped}
    bound = [(side, n) for side, n in sides.items()
             if n.type == "identifier" and ts.text(n) in names]
    if len(bound) != 1:
        return FORM
    side, node = bound[0]
    other = sides["right" if side == "left" else "left"]
    direction = UP if sign[ts.text(node)] == "+" else DOWN
    if direction.get(op) != side or ts.mentions(other, names):
        return FORM
    starts = _starts(loop.child_by_field_name("initializer")) \
        if loop.type == "for_statement" else {}
    if starts is None:
        return FORM
    return tuple(Induction(name, sg, step, u, starts.get(name))
                 for u, (name, sg, step) in zip(updates, stepped, strict=True))


def _updates(node: Node | None) -> list[Node] | None:
    """The updates of a loop's step: one, or several joined by commas."""
    if node is None:
        return None
    if node.type == "comma_expression":
        left, right = _updates(node.child_by_field_name("left")), \
            _updates(node.child_by_field_name("right"))
        return None if left is None or right is None else [*left, *right]
    return [node]


def _stepped(update: Node) -> tuple[str, str, str] | None:
    """(name, sign, step) of `++v`, `v++`, `--v`, `v--`, `v += k` or `v -= k`, else None."""
    if update.type == "update_expression":
        arg = update.child_by_field_name("argument")
        if arg is None or arg.type != "identifier":
            return None
        return ts.text(arg), "+" if "++" in ts.text(update) else "-", "1"
    if update.type == "assignment_expression":
        left, op = update.child_by_field_name("left"), ts.text(
            update.child_by_field_name("operator"))
        if left.type == "identifier" and op in ("+=", "-="):
            step = update.child_by_field_name("right")
            if not ts.mentions(step, {ts.text(left)}):
                return ts.text(left), op[0], ts.text(step)
    return None


def step_of(update: Node) -> Node | None:
    """The distance `v += k` steps by (its k), None for `++v` and `--v`."""
    return update.child_by_field_name("right") if update.type == "assignment_expression" \
        else None


def _starts(init: Node | None) -> dict[str, Node] | None:
    """Each variable's start in a for loop's header (`int r = A`, `r = A`), None for a header
    this move does not read."""
    if init is None:
        return {}
    if init.type == "declaration":
        out = {}
        for name, d in ts.declarators(init):
            if d.type != "init_declarator":
                return None
            out[name] = d.child_by_field_name("value")
        return out
    if init.type == "assignment_expression" and \
            ts.text(init.child_by_field_name("operator")) == "=" and \
            init.child_by_field_name("left").type == "identifier":
        return {ts.text(init.child_by_field_name("left")): init.child_by_field_name("right")}
    return None


def steps(loop: Node) -> list[Node]:
    """Where the loop steps its variables: a for loop's update, a while loop's last
    statements that step (`...; p += n; ++r; }`)."""
    if loop.type == "for_statement":
        update = loop.child_by_field_name("update")
        return [update] if update is not None else []
    return _trailing_steps(loop.child_by_field_name("body"))


def _trailing_steps(body: Node | None) -> list[Node]:
    """The statements at the end of a while loop's body that only step variables (`v += k`,
    `++v`, several joined by commas), in order; none where the last statement does not. Before
    the last, a statement counts only where it steps by a fixed distance (k neither loaded nor
    computed in the body: else it accumulates); whether the last one's distance is fixed the
    reader of the loop judges (and says)."""
    if body is None or body.type != "compound_statement":
        return []
    stmts = ts.statements(body)
    out: list[Node] = []
    for k in range(len(stmts) - 1, -1, -1):
        statement = stmts[k]
        parts = _updates(statement.named_children[0]) if statement.type == \
            "expression_statement" and statement.named_children else None
        if not parts or any(_stepped(p) is None for p in parts):
            break
        made = {d for s in stmts[:k] for n in ts.walk(s) if n.type == "declaration"
                for d, _ in ts.declarators(n)} | {
            ts.text(t) for s in stmts[:k] for n in ts.walk(s)
            if (t := ts.assigned(n)) is not None and t.type == "identifier"}
        if out and any(ts.mentions(step_of(p), made) or (step_of(p) is not None and any(
                n.type in ("subscript_expression", "pointer_expression", "call_expression")
                for n in ts.walk(step_of(p)))) for p in parts):
            break
        out.insert(0, statement)
    return out
