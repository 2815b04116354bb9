"""coarsen: a one-thread-per-element kernel becomes a grid-stride loop over ELEMS elements per
thread, on a grid ELEMS times smaller.

Called for when the SMs, not DRAM, are the limit (the FMA/ALU, special-function or FP64 pipes,
instruction issue, L1, barriers, or warps waiting on one another) in a kernel whose threads
do setup before reaching their element: a table filled in shared memory, a loop, a load or a
function call that does not depend on the element. One thread per element runs that setup once
per element; a thread that walks ELEMS elements runs it once per ELEMS. The shape it reads:

    T i = blockIdx.x * blockDim.x + threadIdx.x;   (casts and operand order free)
    ... setup that does not use i ...
    if (i >= n) return;  ... the element's work ...      or      if (i < n) { ... }

and it leaves alone a kernel whose element work synchronizes (barriers, warp shuffles or votes:
threads of a block would run different trip counts), returns early, breaks out, reads blockIdx
or gridDim, or changes i. The launch grid's first dimension G becomes ceil_div(G, ELEMS): the
grid-stride loop covers every element whatever the grid, and ELEMS = 1 is the source and the
launch as written.
"""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import dealing
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import (
    Applied,
    Edit,
    Knob,
    Move,
    Node,
    Refused,
    Subject,
    decode,
)
from pragma_ncu.syntax import element as el

NAME = "coarsen"
KNOB = "PNCU_COARSEN"
VALUES = (1, 2, 4, 8, 16)
ON = f"{KNOB} != 1"


def apply(subject: Subject) -> Applied | Refused:
    grid = [g.strip() for g in subject.spec.launch.grid]
    why = subject.batched_unfit()
    if why:
        return Refused(NAME, why)
    found = el.element(subject.kernel)
    if isinstance(found, str):
        return Refused(NAME, found)
    why = _unfit(subject, found)
    if why:
        return Refused(NAME, why)
    edits = _edits(subject, found)
    site = (f"the element index {found.name} (line {ts.first_line(found.decl)}) becomes a "
            f"grid-stride loop; grid {grid[0]} -> ceil_div({grid[0]}, ELEMS)")
    return Applied(NAME, (Knob(KNOB, VALUES, 1),), edits, (site,),
                   grid=(f"ceil_div({grid[0]}, {KNOB})", *grid[1:]))


def _unfit(subject: Subject, found: el.Element) -> str:
    body = ts.body(subject.kernel)
    guard, name = found.guard, found.name
    setup = [s for s in ts.statements(body) if s.end_byte <= guard.start_byte and s != found.decl]
    work = found.work(body)
    if not any(_is_setup(subject, s) for s in setup):
        return ("no per-thread setup before the element's work (a loop, a load, a call or a "
                "barrier that does not depend on the element): nothing to amortize")
    for n in (n for w in work for n in ts.walk(w)):
        if n.type == "return_statement":
            return "the element's work returns early"
        if n.type in ("break_statement", "continue_statement") and not \
                ts.enclosing(n, (*ts.LOOPS, "switch_statement"), guard.parent):
            return "the element's work breaks out of its block"
        if n.type == "call_expression" and ts.text(
                n.child_by_field_name("function")).startswith(ts.SYNCING):
            return "the element's work synchronizes threads (barriers, shuffles or votes)"
        if n.type in ("assignment_expression", "update_expression") and ts.text(
                n.child_by_field_name("left") or n.child_by_field_name("argument")) == name:
            return f"the element's work changes {name}"
    if any(n.type == "field_expression" and ts.text(n.child_by_field_name("argument")) in
           ("blockIdx", "gridDim") and ts.text(n) not in dealing.BATCH
           for w in work for n in ts.walk(w)):  # a batch coordinate is the block's, not i's
        return "the element's work reads blockIdx.x or gridDim.x"
    return ""


def _is_setup(subject: Subject, stmt: Node) -> bool:
    params = {p.name for p in ts.pointer_params(subject.kernel)}
    if any(n.type in ts.LOOPS for n in ts.walk(stmt)):
        return True
    if ts.call_names(stmt):
        return True
    return any(a.load for a in ts.accesses(stmt, params))


def _edits(subject: Subject, found: el.Element) -> tuple[Edit, ...]:
    data = subject.data
    decl, name, guard = found.decl, found.name, found.guard
    type_text = ts.text(decl.child_by_field_name("type"))
    init = ts.text(decl.children_by_field_name("declarator")[0].child_by_field_name("value"))
    cond = found.in_range()
    cast = f"decltype({name})" if type_text == "auto" else type_text
    header = (f"for ({type_text} {name} = {init}; {cond}; "
              f"{name} += ({cast})gridDim.x * blockDim.x)")
    indent = ts.indentation(data, decl.start_byte) or ""
    edits = []
    if found.early:
        guard_text = decode(data[guard.start_byte:guard.end_byte])
        close = ts.body(subject.kernel).children[-1]  # its closing brace
        edits.append(Edit(guard.start_byte, guard.end_byte,
                          tpl.when(ON, tpl.literal(header + " {"), guard_text)))
        edits += tpl.indented(data, guard.end_byte, close.start_byte, ON)
        edits.append(Edit(close.start_byte, close.start_byte,
                          tpl.insert(ON, tpl.literal(indent + "}\n"))))
    else:
        condition = guard.child_by_field_name("condition")
        head = decode(data[guard.start_byte:condition.end_byte])
        edits.append(Edit(guard.start_byte, condition.end_byte,
                          tpl.when(ON, tpl.literal(header), head)))
    start, end = tpl.whole_lines(data, decl.start_byte, decl.end_byte)
    edits.append(Edit(start, end, tpl.when(ON, "", decode(data[start:end]))))
    return tuple(edits)


MOVE = Move(
    NAME, ("compute_fma", "compute_sfu", "compute_fp64", "instruction_issue", "l1_bandwidth",
           "barrier_stall", "latency_bound"),
    "turns one thread per element into a grid-stride loop over ELEMS elements per thread, so "
    "per-thread setup runs once per ELEMS elements", apply,
    knobs=(KNOB,),
    never="never changes the block size or the kernel's arguments; only the grid shrinks")
