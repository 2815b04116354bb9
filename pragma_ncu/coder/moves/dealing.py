"""What the moves that change which thread does what share: the checks that a kernel of one
thread per element lets its threads be re-mapped (`kernel_unfit`, `threads_unfit` for a 2-D
element, `cooperates` for threads that work together already), and dealing a loop's
iterations out to several threads (`step_edits`: part p of PARTS starts each variable the loop
steps p steps on and steps it PARTS times as far). `split_reduction`, `row_team`, `vectorize`
and `smem_tile` use them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Edit, Node, Subject
from pragma_ncu.syntax import element as el
from pragma_ncu.syntax import loops as st

LOCAL = "pncu_"  # the prefix of the names the rewrites declare
BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
BATCH = frozenset({"blockIdx.y", "blockIdx.z", "gridDim.y", "gridDim.z"})


def dealt_element(subject: Subject) -> el.Element | str:
    """The kernel's one-thread-per-element shape, or why its threads cannot be re-mapped (no
    such shape, or `kernel_unfit`'s reason)."""
    found = el.element(subject.kernel)
    if isinstance(found, str):
        return found
    return kernel_unfit(subject, found) or found


def kernel_unfit(subject: Subject, found: el.Element) -> str:
    """Why the kernel's threads cannot be re-mapped ('' when they can): names of the moves'
    own prefix, shared memory or synchronization of its own, the thread or block indices read
    outside the element index, an index or guard that does not start its own line. A batch
    coordinate of the grid (blockIdx.y or .z, the same for every thread of a block: the caller
    checked `Subject.batched_unfit`) may be read anywhere."""
    return threads_unfit(subject, (found.decl,), (found.guard,), BATCH)


def threads_unfit(subject: Subject, indices: Sequence[Node], guards: Sequence[Node],
                  kept: frozenset[str] = frozenset()) -> str:
    """`kernel_unfit` for a kernel whose element is read by the declarations `indices` and
    guarded by `guards`; the built-in fields in `kept` (`blockIdx.z`) may be read anywhere."""
    why = cooperates(subject)
    if why:
        return why
    for fn in subject.reached():
        for n in ts.walk(ts.body(fn)):
            if n.type == "field_expression" and ts.text(n) not in kept and (
                    fn != subject.kernel or not any(ts.inside(n, d) for d in indices)) and \
                    ts.text(n.child_by_field_name("argument")) in BUILTINS:
                return (f"the kernel reads {ts.text(n)} outside its element index: each "
                        "thread's place would change")
    if any(ts.indentation(subject.data, n.start_byte) is None for n in (*indices, *guards)):
        return "the element index or its guard does not start its own line"
    return ""


def cooperates(subject: Subject) -> str:
    """Why the kernel's threads work together already ('' when they do not): shared memory or
    synchronization of its own, or names of the moves' own prefix (a move's rewrite)."""
    for fn in subject.reached():
        for n in ts.walk(ts.body(fn)):
            if n.type == "identifier" and ts.text(n).startswith(LOCAL):
                return f"the kernel has names of its own that begin with {LOCAL}"
            if ts.is_shared(n):
                return "the kernel has shared memory of its own"
            if n.type == "call_expression" and ts.text(
                    n.child_by_field_name("function")).startswith(ts.SYNCING):
                return "the kernel synchronizes threads (barriers, shuffles or votes)"
    return ""


def step_edits(data: bytes, loop: Node, inductions: tuple[st.Induction, ...], on: str,
               part: str, parts: str, indent: str = "") -> list[Edit]:
    """Where `on` holds, each variable the loop steps starts `part` steps on and steps `parts`
    (template text) times as far: in the loop's header where it starts there, else in a
    statement right above the loop (indented by `indent` more than the loop's line)."""
    edits, offsets = [], []
    for i in inductions:
        one = i.step == "1"
        far = parts if one else tpl.literal(f"({i.step}) * ") + parts
        edits.append(Edit(i.update.start_byte, i.update.end_byte, tpl.when(
            on, tpl.literal(f"{i.name} {i.sign}= ") + far, ts.text(i.update))))
        moved = part if one else f"{part} * ({i.step})"
        if i.start is not None:
            first = ts.text(i.start) if i.start.type in ("identifier", "number_literal") else \
                f"({ts.text(i.start)})"
            edits.append(Edit(i.start.start_byte, i.start.end_byte, tpl.when(
                on, tpl.literal(f"{first} {i.sign} {moved}"), ts.text(i.start))))
        else:
            offsets.append(f"{i.name} {i.sign}= {moved};")
    if offsets:
        lead = ts.indentation(data, loop.start_byte) or ""
        line = loop.start_byte - len(lead.encode())
        edits.append(Edit(line, line, tpl.insert(on, tpl.literal(
            "".join(f"{lead}{indent}{o}\n" for o in offsets)))))
    return edits
