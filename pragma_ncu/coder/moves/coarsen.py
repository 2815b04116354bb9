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

import re

from pragma_ncu.coder.moves import syntax as ts
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

NAME = "coarsen"
KNOB = "PNCU_COARSEN"
VALUES = (1, 2, 4, 8, 16)
ON = f"{KNOB} != 1"
_CAST = re.compile(r"\((?:const)?(?:unsigned|signed)?(?:longlong|long|int|size_t|int64_t|"
                   r"uint64_t|int32_t|uint32_t|unsigned|ptrdiff_t)\)")
INDEX_FORMS = {"blockIdx.x*blockDim.x+threadIdx.x", "blockDim.x*blockIdx.x+threadIdx.x",
               "threadIdx.x+blockIdx.x*blockDim.x", "threadIdx.x+blockDim.x*blockIdx.x"}
SYNCING = ("__syncthreads", "__syncwarp", "__shfl", "__ballot", "__any", "__all", "__activemask",
           "__reduce", "this_thread_block", "tiled_partition", "grid_group", "__match")
FLIP = {">=": "<", ">": "<=", "<=": ">", "<": ">="}


def apply(subject: Subject) -> Applied | Refused:
    grid = [g.strip() for g in subject.spec.launch.grid]
    if not subject.one_dimensional:
        return Refused(NAME, "the launch is not one-dimensional")
    found = _shape(subject)
    if isinstance(found, Refused):
        return found
    decl, name, guard, early = found
    why = _unfit(subject, decl, name, guard, early)
    if why:
        return Refused(NAME, why)
    edits = _edits(subject, decl, name, guard, early)
    site = (f"the element index {name} (line {ts.first_line(decl)}) becomes a grid-stride "
            f"loop; grid {grid[0]} -> ceil_div({grid[0]}, ELEMS)")
    return Applied(NAME, (Knob(KNOB, VALUES, 1),), edits, (site,),
                   grid=(f"ceil_div({grid[0]}, {KNOB})", *grid[1:]))


def _shape(subject: Subject) -> tuple[Node, str, Node, bool] | Refused:
    """The index declaration, its name, the guard and whether it returns early."""
    stmts = _statements(ts.body(subject.kernel))
    for k, decl in enumerate(stmts):
        name = _index_name(decl)
        if name is None:
            continue
        later = [s for s in stmts[k + 1:] if ts.mentions(s, {name})]
        if not later or later[0].type != "if_statement" or \
                later[0].child_by_field_name("alternative") is not None:
            return Refused(NAME, f"{name} is not checked by an `if` (without else) before use")
        guard = later[0]
        early = _returns(guard.child_by_field_name("consequence"))
        if not early and len(later) > 1:
            return Refused(NAME, f"{name} is used after its guarded block")
        return decl, name, guard, early
    return Refused(NAME, "no `i = blockIdx.x * blockDim.x + threadIdx.x` element index at the "
                         "top of the kernel")


def _statements(body: Node) -> list[Node]:
    return [c for c in body.named_children if c.type != "comment"]


def _index_name(decl: Node) -> str | None:
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
    return node.type == "compound_statement" and [c.type for c in _statements(node)] == \
        ["return_statement"]


def _unfit(subject: Subject, decl: Node, name: str, guard: Node, early: bool) -> str:
    body = ts.body(subject.kernel)
    setup = [s for s in _statements(body) if s.end_byte <= guard.start_byte and s != decl]
    work = _work(body, guard, early)
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
                n.child_by_field_name("function")).startswith(SYNCING):
            return "the element's work synchronizes threads (barriers, shuffles or votes)"
        if n.type in ("assignment_expression", "update_expression") and ts.text(
                n.child_by_field_name("left") or n.child_by_field_name("argument")) == name:
            return f"the element's work changes {name}"
    if any(ts.uses_builtin(w, b) for w in work for b in ("blockIdx", "gridDim")):
        return "the element's work reads blockIdx or gridDim"
    return ""


def _work(body: Node, guard: Node, early: bool) -> list[Node]:
    if early:
        return [s for s in _statements(body) if s.start_byte >= guard.end_byte]
    return [guard.child_by_field_name("consequence")]


def _is_setup(subject: Subject, stmt: Node) -> bool:
    params = {p.name for p in ts.pointer_params(subject.kernel)}
    if any(n.type in ts.LOOPS for n in ts.walk(stmt)):
        return True
    if ts.call_names(stmt):
        return True
    return any(a.load for a in ts.accesses(stmt, params))


def _edits(subject: Subject, decl: Node, name: str, guard: Node, early: bool
           ) -> tuple[Edit, ...]:
    data = subject.data
    type_text = ts.text(decl.child_by_field_name("type"))
    init = ts.text(decl.children_by_field_name("declarator")[0].child_by_field_name("value"))
    cond = _condition(guard, name, early)
    cast = f"decltype({name})" if type_text == "auto" else type_text
    header = (f"for ({type_text} {name} = {init}; {cond}; "
              f"{name} += ({cast})gridDim.x * blockDim.x)")
    indent = ts.indentation(data, decl.start_byte) or ""
    edits = []
    if early:
        guard_text = decode(data[guard.start_byte:guard.end_byte])
        close = ts.body(subject.kernel).children[-1]  # its closing brace
        edits.append(Edit(guard.start_byte, guard.end_byte,
                          tpl.when(ON, tpl.literal(header + " {"), guard_text)))
        edits += _indented(data, guard.end_byte, close.start_byte)
        edits.append(Edit(close.start_byte, close.start_byte,
                          tpl.insert(ON, tpl.literal(indent + "}\n"))))
    else:
        condition = guard.child_by_field_name("condition")
        head = decode(data[guard.start_byte:condition.end_byte])
        edits.append(Edit(guard.start_byte, condition.end_byte,
                          tpl.when(ON, tpl.literal(header), head)))
    start, end = _whole_lines(data, decl.start_byte, decl.end_byte)
    edits.append(Edit(start, end, tpl.when(ON, "", decode(data[start:end]))))
    return tuple(edits)


def _indented(data: bytes, start: int, end: int) -> list[Edit]:
    """One more level of indentation for the lines that begin in [start, end)."""
    out = []
    pos = data.find(b"\n", start, end)
    while pos != -1 and pos + 1 < end:
        if data[pos + 1:pos + 2] not in (b"\n", b""):
            out.append(Edit(pos + 1, pos + 1, tpl.insert(ON, "    ")))
        pos = data.find(b"\n", pos + 1, end)
    return out


def _whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to its whole line (with its newline) when nothing else is on it."""
    line = data.rfind(b"\n", 0, start) + 1
    stop = data.find(b"\n", end)
    if data[line:start].strip() or (stop != -1 and data[end:stop].strip()):
        return start, end
    return line, (stop + 1 if stop != -1 else end)


def _condition(guard: Node, name: str, early: bool) -> str:
    clause = guard.child_by_field_name("condition")
    inner = clause.child_by_field_name("value") or clause.named_children[0]
    if not early:
        return ts.text(inner)
    if inner.type == "binary_expression":
        op = ts.text(inner.child_by_field_name("operator"))
        left, right = inner.child_by_field_name("left"), inner.child_by_field_name("right")
        if op in FLIP and ts.text(left) == name:
            return f"{name} {FLIP[op]} {ts.text(right)}"
    return f"!({ts.text(inner)})"


MOVE = Move(
    NAME, ("compute_fma", "compute_sfu", "compute_fp64", "instruction_issue", "l1_bandwidth",
           "barrier_stall", "latency_bound"),
    "turns one thread per element into a grid-stride loop over ELEMS elements per thread, so "
    "per-thread setup runs once per ELEMS elements", apply,
    knobs=(KNOB,),
    never="never changes the block size or the kernel's arguments; only the grid shrinks")
