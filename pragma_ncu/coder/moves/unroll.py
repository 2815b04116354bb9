"""unroll: `#pragma unroll U` on the loops where the kernel spends its time.

Called for when warps wait on memory or on each other (memory latency, latency-bound) or the
schedulers are busy with loop overhead (issue-bound): unrolling a loop whose iterations load
independently puts U loads in flight where the compiler's own choice put fewer, and drops the
per-iteration branch and index updates. Which loops: the innermost loops that hold the hot
lines when the profile has source counters, else the innermost loops that load through a
pointer parameter. Loops the compiler already unrolls whole (a constant trip count) or that
carry their own unroll pragma are left alone. U = 0 (no pragma) is the source as written.
"""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject

NAME = "unroll"
KNOB = "PNCU_UNROLL"
VALUES = (0, 1, 2, 4, 8)
MAX_LOOPS = 2  # the hottest ones: one knob drives them all, so the space stays small
HOT_LINES = 8  # how many of the hottest lines count as hot


def apply(subject: Subject) -> Applied | Refused:
    loops, how = _chosen(subject)
    if not loops:
        return Refused(NAME, how)
    edits, sites = [], []
    for loop in loops[:MAX_LOOPS]:
        indent = ts.indentation(subject.data, loop.start_byte)
        assert indent is not None  # _eligible kept only loops that start their line
        on = tpl.literal(indent + "#pragma unroll ") + tpl.value(KNOB) + "\n"
        line = loop.start_byte - len(indent.encode())  # at the line's start: a move that
        # indents the loop's line (coarsen, split_reduction) indents the loop, not the pragma
        edits.append(Edit(line, line, tpl.insert(KNOB, on), last=True))
        sites.append(f"the loop at line {ts.first_line(loop)} ({how})")
    return Applied(NAME, (Knob(KNOB, VALUES, 0),), tuple(edits), tuple(sites))


def _chosen(subject: Subject) -> tuple[list[Node], str]:
    functions = subject.reached()
    candidates = [n for f in functions for n in ts.walk(ts.body(f)) if n.type == "for_statement"]
    eligible = [n for n in candidates if _eligible(n, subject)]
    if not candidates:
        return [], "the kernel has no for loop"
    if not eligible:
        return [], ("every loop is unrolled already (an unroll pragma, or a constant trip "
                    "count the compiler unrolls whole), or does not start its own line")
    hot = set(subject.hot_lines[:HOT_LINES])
    if hot:
        found = _innermost([n for n in eligible if _holds(n, hot)])
        found.sort(key=lambda n: min(subject.hot_lines.index(h) for h in hot
                                     if ts.first_line(n) <= h <= ts.last_line(n)))
        return found, "hot in the profile's source counters" if found else \
            "no loop holds the profile's hot lines"
    loads = [a.node for f in functions for a in ts.accesses(
        ts.body(f), {p.name for p in ts.pointer_params(f)}) if a.load]
    loading = [n for n in eligible if any(ts.inside(a, n) for a in loads)]
    return _innermost(loading), "innermost, loads through a pointer parameter" if loading else \
        "no loop loads through a pointer parameter (and the profile has no source counters)"


def _eligible(loop: Node, subject: Subject) -> bool:
    pragma = ts.pragma_before(subject.data, loop.start_byte)
    if pragma.startswith(("unroll", "nounroll")):
        return False
    if ts.indentation(subject.data, loop.start_byte) is None:
        return False
    return not _constant_trips(loop, subject.constants)


def _constant_trips(loop: Node, constants: dict[str, int]) -> bool:
    """`for (int i = A; i < B; ...)` with A and B literals or constant macros."""
    cond = loop.child_by_field_name("condition")
    init = loop.child_by_field_name("initializer")
    if cond is None or cond.type != "binary_expression" or init is None:
        return False
    bound = cond.child_by_field_name("right")
    start = init.child_by_field_name("declarator") if init.type == "declaration" else None
    start_value = start.child_by_field_name("value") if start is not None else None
    return _constant(bound, constants) and _constant(start_value, constants)


def _constant(node: Node | None, constants: dict[str, int]) -> bool:
    if node is None:
        return False
    if node.type == "number_literal":
        return True
    return node.type == "identifier" and ts.text(node) in constants


def _holds(loop: Node, hot: set[int]) -> bool:
    return any(ts.first_line(loop) <= h <= ts.last_line(loop) for h in hot)


def _innermost(loops: list[Node]) -> list[Node]:
    """The loops that contain none of the others."""
    return [n for n in loops if not any(m != n and ts.inside(m, n) for m in loops)]


MOVE = Move(
    NAME, ("memory_latency", "latency_bound", "instruction_issue"),
    "unrolls the hot loops (#pragma unroll U) so that more loads are in flight and less loop "
    "overhead is issued", apply,
    knobs=(KNOB,),
    never="never touches a loop with its own unroll pragma or a constant trip count")
