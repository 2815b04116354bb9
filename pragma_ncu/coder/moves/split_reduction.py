"""split_reduction: SPLIT threads of a block share each output's reduction loop, on a grid
SPLIT times larger; the partial results meet in shared memory.

Called for when the grid is too small for the GPU (too few blocks for the SMs) in a kernel
whose thread computes its output by a long loop: one thread per output (a column sum, y = A^T
x, a per-channel statistic) gives the GPU as many threads as there are outputs, often far fewer
than its SMs hold, and no block size or unroll makes more of them. Splitting the loop's
iterations over SPLIT threads makes SPLIT times as many threads, each with a SPLIT-th of the
loop; a barrier and SPLIT - 1 shared-memory reads per output put the parts together. The shape
it reads is the element shape (`element`) with a reduction in the element's work:

    T c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;                         (or `if (c < n) { ... }`)
    float acc = 0.0f;                           accumulators declared before the loop
    ... declarations (loads too) ...
    for (int r = A; r < B; ++r) { ... acc += e; ... }
    ... what is done with acc (stores) ...

The loop is a `for` or a `while` that steps its variables once an iteration by a distance
it does not change (`++r`, `r += S`, `--r`, `r -= S`; several at once, as in `++i, p += n`,
or as a `while` body's last statement) and runs while one of them is below (above, counting
down) a bound it does not change. Part p starts each variable p steps on (in the loop's
header, or right above the loop) and steps it SPLIT times as far.

The loop's body may only update its accumulators (`acc += e`, `acc -= e`, `acc = acc + e`,
`++acc`, `acc = fmaxf(acc, e)` and the other min/max), and never reads them otherwise; it
stores nothing, breaks nowhere and synchronizes nothing, so its iterations can be dealt out in
any order. A sum starts at a literal 0 (each part starts there); a min or max starts at a value
that needs nothing of the element. The kernel must read its thread and block indices only in
the element index, synchronize nowhere and have no shared memory of its own (the move adds a
barrier and 4 bytes a thread an accumulator). Part 0 of each output adds the other parts' sums
in order and runs what followed the loop; the sum is taken in another order than the source's,
which verification at the spec's tolerance judges like any other change of rounding.

The block keeps its size: each block covers blockDim.x / SPLIT outputs (adjacent threads,
adjacent outputs: loads stay coalesced) and the grid's first dimension G becomes
ceil_div(G * B, B // SPLIT) for the block's size B; SPLIT = 1 is the source and the launch as
written.
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import dealing
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject, decode
from pragma_ncu.syntax import element as el
from pragma_ncu.syntax import loops as st
from pragma_ncu.syntax import reductions as rd
from pragma_ncu.syntax.reductions import SUM, Accumulator

NAME = "split_reduction"
KNOB = "PNCU_SPLIT"
VALUES = (1, 2, 4, 8, 16)
ON = f"{KNOB} != 1"
SLOTS = 1024  # a slot a thread for its part: the block's size where the spec writes it as a
# number (the rewrite then holds that size), else the most threads a block has
MAX_ACCUMULATORS = 4
LOCAL = dealing.LOCAL


@dataclass(frozen=True)
class Reduction:
    element: el.Element
    loop: Node
    accumulators: tuple[Accumulator, ...]
    inductions: tuple[st.Induction, ...]
    carried: tuple[Node, ...] = ()  # declarations moved before the guard, in source order: the
    # accumulators' and those of values used after the loop that need nothing of the element


def apply(subject: Subject) -> Applied | Refused:
    launch = subject.spec.launch
    why = subject.batched_unfit()
    if why:
        return Refused(NAME, why)
    found = _reduction(subject)
    if isinstance(found, str):
        return Refused(NAME, found)
    grid, block = launch.grid[0].strip(), launch.block[0].strip()
    slots = int(block) if block.isdigit() else SLOTS
    values = tuple(v for v in VALUES if v <= slots)  # a thread a part at least
    if len(values) < 2:
        return Refused(NAME, f"a block of {block} threads leaves no room to split a loop")
    edits = _edits(subject, found, slots)
    names = ", ".join(a.name for a in found.accumulators)
    site = (f"the loop at line {ts.first_line(found.loop)} ({names}) is dealt out to SPLIT "
            f"threads an output, its parts summed in shared memory; grid {grid} -> "
            f"ceil_div(({grid}) * ({block}), ({block}) // SPLIT)")
    return Applied(NAME, (Knob(KNOB, values, 1),), edits, (site,),
                   grid=(f"ceil_div(({grid}) * ({block}), ({block}) // {KNOB})",
                         *[g.strip() for g in launch.grid[1:]]),
                   writes_block=slots != SLOTS)


# --- reading ---------------------------------------------------------------------------------

def _reduction(subject: Subject) -> Reduction | str:
    found = dealing.dealt_element(subject)
    if isinstance(found, str):
        return found
    body = ts.body(subject.kernel)
    work = found.work(body)
    if not found.early:
        if any(s.start_byte >= found.guard.end_byte for s in ts.statements(body)):
            return "statements follow the guarded block"
        work = ts.statements(work[0])
    loops = [s for s in work if s.type in ts.LOOPS]
    if len(loops) != 1:
        return ("the element's work is not one loop between its declarations and what follows "
                "(no loop, or several)")
    loop = loops[0]
    before = [s for s in work if s.end_byte <= loop.start_byte]
    after = [s for s in work if s.start_byte >= loop.end_byte]
    why = _before_unfit(subject, before) or _after_unfit(after)
    if why:
        return why
    inductions = st.inductions(loop)
    if isinstance(inductions, str):
        return inductions
    if ts.walks_contiguous(loop, inductions, _pointers(subject), body, found.name):
        return ("the loop walks contiguous addresses (a row): parts blockDim / SPLIT threads "
                "apart would not read them together; a team of adjacent threads would "
                "(row_team)")
    driven = {i.name for i in inductions}
    body_of, stepping = loop.child_by_field_name("body"), st.steps(loop)
    changed = {ts.text(t) for n in ts.walk(body_of) if (t := ts.assigned(n)) is not None
               and not any(ts.inside(n, x) for x in stepping)}
    changed |= {d for n in ts.walk(body_of) if n.type == "declaration"
                for d, _ in ts.declarators(n)}
    for i in inductions:
        step = st.step_of(i.update)
        if step is not None and (ts.identifiers(step) & changed or ts.call_names(step) or
                                 any(n.type in ("subscript_expression", "pointer_expression",
                                                "field_expression") for n in ts.walk(step))):
            return f"{i.name} steps by what the loop changes or loads ({ts.text(step)})"
    used_after = set().union(*(ts.identifiers(s) for s in after))
    live = {d for d in driven if ts.reads_first(after, d)}
    if live:
        return (f"what follows the loop uses {', '.join(sorted(live))}, which "
                "the loop steps (each part would leave it elsewhere)")
    inside = _declarations(before)
    outside = _declarations([s for s in ts.statements(body) if s.end_byte <= found.guard.start_byte
                             and s != found.decl])
    accumulators = _accumulators(loop, driven, inside, outside)
    if isinstance(accumulators, str):
        return accumulators
    names = {a.name for a in accumulators}
    setup = [s for s in ts.statements(body) if s.start_byte < found.guard.start_byte]
    for s in (*setup, *before):
        written = {ts.text(t) for n in ts.walk(s) if (t := ts.assigned(n)) is not None}
        if written & names:
            return f"{', '.join(sorted(written & names))} changes before the loop"
    carried = _carried(subject, found, before, inside, accumulators, used_after)
    if isinstance(carried, str):
        return carried
    for a in accumulators:
        if a.combine == SUM and not rd.is_zero(a.init):
            return f"the sum {a.name} does not start at a literal 0"
        if a.init is not None and (ts.mentions(a.init, set(inside) | {found.name}) or
                                   ts.accesses(a.init, _pointers(subject))):
            return f"{a.name} starts at a value that depends on the element"
    return Reduction(found, loop, accumulators, inductions, carried)


def _carried(subject: Subject, found: el.Element, before: list[Node], inside: dict[str, Node],
             accumulators: tuple[Accumulator, ...], used_after: set[str]
             ) -> tuple[Node, ...] | str:
    """The declarations to move before the guard, in source order: the accumulators' and
    those of the values used after the loop (with the values they are computed from), which
    must need nothing of the element (`inside`: the declarations among `before`)."""
    names = {a.name for a in accumulators}
    uniform = _uniform(subject, before, found.name)
    needed = used_after & (set(inside) - names)
    if needed - uniform:
        return (f"what follows the loop uses {', '.join(sorted(needed - uniform))}, declared "
                "before it in the guarded work from the element (only the accumulators and "
                "values that need nothing of the element are carried past the loop)")
    carried = {a.decl for a in accumulators if a.name in inside}  # declared in the work
    wanted = set(needed)
    while wanted:  # the values carried and the values they are computed from
        name = wanted.pop()
        decl = inside[name]
        if decl not in carried:
            carried.add(decl)
            wanted |= ts.identifiers(decl) & uniform - {name}
    for decl in carried:
        mixed = [d for d, _ in ts.declarators(decl) if d not in names | uniform]
        if mixed:
            return (f"{', '.join(mixed)} is declared beside an accumulator from the element "
                    "(only the accumulators and values that need nothing of the element are "
                    "carried past the loop)")
    return tuple(sorted(carried, key=lambda d: d.start_byte))


def _before_unfit(subject: Subject, before: list[Node]) -> str:
    pointers = _pointers(subject)
    for s in before:
        for n in ts.walk(s):
            if n.type in (*ts.LOOPS, "return_statement", "goto_statement", "break_statement"):
                return "the element's work before its loop has a loop, a return or a jump"
        if any(a.store for a in ts.accesses(s, pointers)) or rd.effects(s):
            return "the element's work stores or has side effects before its loop"
        if s.type == "declaration" and ts.indentation(subject.data, s.start_byte) is None:
            return "a declaration before the loop does not start its own line"
    return ""


def _after_unfit(after: list[Node]) -> str:
    for s in after:
        for n in ts.walk(s):
            if n.type in ("return_statement", "goto_statement"):
                return "what follows the loop returns or jumps"
    return ""


def _accumulators(loop: Node, driven: set[str], inside: dict[str, Node],
                  outside: dict[str, Node]) -> tuple[Accumulator, ...] | str:
    """The names the loop accumulates into (declared in the guarded work before it, `inside`,
    or before the guard, `outside`), each with the way two parts combine."""
    declared = {**outside, **inside}
    body = rd.body_of(loop)
    if body.jump:
        return body.jump
    if body.stores:
        return "the loop stores to memory or to an array"
    for name, _, _ in body.updates:
        if name in driven:
            return f"the loop changes {name}, which it steps, in its body"
        if name not in declared:
            return f"the loop changes {name}, declared outside the element's work"
    combine = body.combine()
    if isinstance(combine, str):
        return combine
    if not combine:
        return "the loop accumulates nothing declared before it"
    if len(combine) > MAX_ACCUMULATORS:
        return f"the loop has more than {MAX_ACCUMULATORS} accumulators"
    read = rd.read_elsewhere(loop, set(combine), body.sanctioned)
    if read:
        return f"the loop reads {read} beyond accumulating it"
    if rd.bounded_by(loop, set(combine)):
        return "the loop's bounds depend on what it accumulates"
    out = []
    for name, kind in combine.items():
        acc = rd.accumulator(name, kind, declared[name])
        if isinstance(acc, str):
            return acc
        out.append(acc)
    return tuple(out)


def _declarations(stmts: list[Node]) -> dict[str, Node]:
    """name -> its declaration statement, for the declarations among `stmts`."""
    return {name: s for s in stmts if s.type == "declaration" for name, _ in ts.declarators(s)}


def _uniform(subject: Subject, before: list[Node], index: str) -> set[str]:
    """The names declared in `before` whose values need nothing of the element: initialized
    (if at all) from the kernel's scalars, constants and earlier such names, with no load and
    no call with side effects (`unsigned n = ndraws - lag;`). Every part of every output
    computes them alike, so they may be computed before the guard."""
    out: set[str] = set()
    inside: set[str] = set()
    pointers = _pointers(subject)
    for s in before:
        if s.type != "declaration":
            continue
        declared = [d for d, _ in ts.declarators(s)]
        free = not ts.accesses(s, pointers) and not rd.effects(s) and \
            not ts.mentions(s, {index} | (inside - out)) and \
            not any(ts.text(c) == "static" for c in s.children)
        inside |= set(declared)
        if free:
            out |= set(declared)
    return out


def _pointers(subject: Subject) -> set[str]:
    return {p.name for p in ts.pointer_params(subject.kernel)}


# --- writing ---------------------------------------------------------------------------------

def _edits(subject: Subject, r: Reduction, slots: int) -> tuple[Edit, ...]:
    data = subject.data
    found = r.element
    guard = found.guard
    indent = ts.indentation(data, guard.start_byte) or ""
    split = tpl.value(KNOB)
    edits = [_index(data, found, indent)]
    hoisted = ""
    gone: list[tuple[int, int]] = []
    for decl in r.carried:
        start, end = tpl.whole_lines(data, decl.start_byte, decl.end_byte)
        gone.append((start, end))
        edits.append(Edit(start, end, tpl.when(ON, "", decode(data[start:end]))))
        hoisted += tpl.literal(ts.text(decl) + "\n" + indent)
    in_range = found.in_range()
    opening = hoisted + tpl.literal(f"if (({in_range}) && {LOCAL}part < ") + split + \
        tpl.literal(") {")
    if found.early:
        edits.append(Edit(guard.start_byte, guard.end_byte,
                          tpl.when(ON, opening, decode(data[guard.start_byte:guard.end_byte]))))
    else:
        brace = guard.child_by_field_name("consequence").children[0]
        edits.append(Edit(guard.start_byte, brace.end_byte,
                          tpl.when(ON, opening, decode(data[guard.start_byte:brace.end_byte]))))
    edits += dealing.step_edits(data, r.loop, r.inductions, ON, f"{LOCAL}part", split,
                                "    " if found.early else "")  # (the work is indented)
    edits.append(Edit(r.loop.end_byte, r.loop.end_byte,
                      tpl.insert(ON, _combine(r, indent, in_range, split, slots))))
    if found.early:
        close = ts.body(subject.kernel).children[-1]
        edits += tpl.indented(data, guard.end_byte, close.start_byte, ON, tuple(gone))
        edits.append(Edit(close.start_byte, close.start_byte,
                          tpl.insert(ON, tpl.literal(indent + "}\n"))))
    return tuple(edits)


def _index(data: bytes, found: el.Element, indent: str) -> Edit:
    """The element index, with the outputs a block covers and the part a thread takes."""
    decl = found.decl
    declarator = decl.children_by_field_name("declarator")[0]
    prefix = decode(data[decl.start_byte:declarator.start_byte])  # "const int "
    type_text = ts.text(decl.child_by_field_name("type"))
    cast = "" if type_text == "auto" else f"({type_text})"
    outputs, part = f"{LOCAL}outputs", f"{LOCAL}part"
    on = (tpl.literal(f"const int {outputs} = blockDim.x / ") + tpl.value(KNOB) +
          tpl.literal(";  // outputs a block covers, ") + tpl.value(KNOB) +
          tpl.literal(f" threads each\n{indent}const int {part} = threadIdx.x / {outputs};\n"
                      f"{indent}{prefix}{found.name} = {cast}blockIdx.x * {outputs} + "
                      f"threadIdx.x % {outputs};"))
    return Edit(decl.start_byte, decl.end_byte,
                tpl.when(ON, on, decode(data[decl.start_byte:decl.end_byte])))


def _combine(r: Reduction, indent: str, in_range: str, split: str, slots: int) -> str:
    """After the loop: close the parts' block, put the parts together in part 0, and open the
    block of what followed the loop (part 0 of an output in range only)."""
    inner = indent + "    "
    lines = [f"\n{indent}}}"]
    for a in r.accumulators:
        lines += [f"{indent}__shared__ {a.type} {LOCAL}{a.name}[{slots}];",
                  f"{indent}{LOCAL}{a.name}[threadIdx.x] = {a.name};"]
    lines += [f"{indent}__syncthreads();", f"{indent}if ({LOCAL}part == 0) {{",
              f"{inner}for (int {LOCAL}q = 1; {LOCAL}q < @SPLIT@; ++{LOCAL}q) {{"]
    for a in r.accumulators:
        other = f"{LOCAL}{a.name}[{LOCAL}q * {LOCAL}outputs + threadIdx.x]"
        lines.append(f"{inner}    {a.name} += {other};" if a.combine == SUM else
                     f"{inner}    {a.name} = {a.combine}({a.name}, {other});")
    lines += [f"{inner}}}", f"{indent}}}", f"{indent}if ({LOCAL}part == 0 && ({in_range})) {{"]
    head, tail = "\n".join(lines).split("@SPLIT@")
    return tpl.literal(head) + split + tpl.literal(tail)


MOVE = Move(
    NAME, ("small_grid",),
    "deals each output's reduction loop out to SPLIT threads of a block (the grid grows SPLIT "
    "times), for a grid of one thread per output too small to fill the GPU", apply,
    knobs=(KNOB,),
    never="never changes the block size or the kernel's arguments; touches only a loop whose "
          "iterations store nothing and only accumulate")
