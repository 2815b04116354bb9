"""row_team: a kernel whose thread owns a row (walking its columns in loops, with sums, minima
or maxima between them) becomes one whose TEAM threads own it together: every loop over the
row strided by the team, every reduction combined across it and handed back to all of its
threads, the row's own stores done by one of them.

Called for when one thread per row leaves the GPU idle or reads memory the wrong way: a small
grid (a thread per row is as many threads as rows), uncoalesced accesses (the lanes of a warp
walk 32 different rows), exposed memory latency (one dependent chain of loads a thread). The
shape it reads is the element shape (`pragma_ncu.syntax.element`), the element being a row:

    T r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;                               (or `if (r < N) { ... }`)
    const float* xr = x + r * C;                      values of the row, computed by each thread
    float m = -INFINITY;
    for (int j = 0; j < C; ++j) m = fmaxf(m, xr[j]);  a loop the team shares
    float s = 0.0f;
    for (int j = 0; j < C; ++j) { o[j] = expf(xr[j] - m); s += o[j]; }
    for (int j = 0; j < C; ++j) o[j] /= s;
    sums[r] = s;                                      a store of the row: one thread does it

The loops the team shares are the work's own (not nested in another statement) whose steps
`pragma_ncu.syntax.loops` reads. Their bodies may store (to an address that moves with the
loop's variable, so that each thread stores its own), update what they accumulate by a sum, a
min or a max (`pragma_ncu.syntax.reductions`), and load; they may read back only what the
team's thread stored at the same address in the same loop or in an earlier one with the same
header (a thread reads its own columns). After each loop its accumulators are combined across
the team (warp shuffles, shared memory across warps) so that every thread holds the row's
value. Statements between the loops run in every thread alike; those that store or have effects
run in the team's first thread only. A sum must start at a literal 0 (each thread starts there)
and be accumulated by one loop.

Two layouts, chosen from how the loops read memory: where a loop's variable walks contiguous
addresses (`xr[j]`, a row of a row-major array) the team is TEAM adjacent threads (32 to 1024;
a warp per row, or a block), the block max(B, TEAM); where it walks down a column (`x[r * C +
c]`: adjacent outputs at adjacent addresses) the team's threads are blockDim / TEAM apart, so
that adjacent threads still read adjacent addresses (TEAM 2 to 32 of a block of B). Threads
whose row is out of range work on the last row and store nothing, so that every thread of a
block reaches the barriers of the combination. The grid's first dimension G becomes
ceil_div(G * B, threads a block / TEAM); TEAM = 1 is the source and the launch as written.

It leaves alone a kernel that synchronizes or has shared memory of its own, reads the thread or
block indices outside its row index, a loop that returns or breaks out, changes a value other
than by a sum, min or max, or stores where two of the team's threads could meet, and a row that
reads back what another thread of the team stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import dealing, split_reduction
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject, decode
from pragma_ncu.syntax import element as el
from pragma_ncu.syntax import loops as st
from pragma_ncu.syntax import reductions as rd
from pragma_ncu.syntax.reductions import SUM, Accumulator

NAME = "row_team"
KNOB = "PNCU_TEAM"
ON = f"{KNOB} != 1"
ROWS, COLUMNS = "rows", "columns"
VALUES = {ROWS: (1, 32, 64, 128, 256, 512, 1024), COLUMNS: (1, 2, 4, 8, 16, 32)}
LOCAL = dealing.LOCAL
LANE, LIVE = f"{LOCAL}lane", f"{LOCAL}live"
TEAM = "@TEAM@"  # the knob's value in the plain text below
WIDE, END = "@WIDE@", "@END@"  # a team wider than a warp: what only it needs
WARP = 32


@dataclass(frozen=True)
class Loop:
    node: Node
    inductions: tuple[st.Induction, ...]
    accumulators: tuple[Accumulator, ...]
    stores: tuple[Node, ...]  # the statements that store (each thread its own addresses)


@dataclass(frozen=True)
class Row:
    element: el.Element
    work: tuple[Node, ...]  # the row's statements
    loops: tuple[Loop, ...]
    first: tuple[Node, ...]  # statements of the row that store: the team's first thread's
    layout: str


def apply(subject: Subject) -> Applied | Refused:
    why = subject.batched_unfit()
    if why:
        return Refused(NAME, why)
    block = subject.spec.launch.block[0].strip()
    size = _block_size(subject, block)
    if isinstance(size, str):
        return Refused(NAME, size)
    row = _row(subject)
    if isinstance(row, str):
        return Refused(NAME, row)
    if row.layout == COLUMNS and isinstance(split_reduction.apply(subject), Applied):
        return Refused(NAME, "split_reduction deals this one loop out to threads a column "
                             "apart, as the team would")
    values = tuple(v for v in VALUES[row.layout] if v == 1 or (
        size % v == 0 if row.layout == COLUMNS else v >= size or size % v == 0))
    if not block.isdigit():  # a parameter, whatever multiple of a warp it takes
        values = tuple(v for v in values if v <= WARP)
    if len(values) < 2:
        return Refused(NAME, f"no team fits a block of {block} threads")
    grid = subject.spec.launch.grid[0].strip()
    threads = f"max({block}, {KNOB})" if row.layout == ROWS and block.isdigit() else block
    rows = _rows(subject, row.element) or f"({grid}) * ({block})"  # how many to cover
    lines = ", ".join(str(ts.first_line(loop.node)) for loop in row.loops)
    how = ("TEAM adjacent threads a row" if row.layout == ROWS else
           f"TEAM threads {block} / TEAM apart a row (it walks a column)")
    site = (f"the loops at lines {lines} shared by {how}, their sums, minima and maxima "
            f"combined across the team; grid {grid} -> ceil_div({rows}, {threads} // TEAM)")
    return Applied(NAME, (Knob(KNOB, values, 1),), _edits(subject, row, size), (site,),
                   grid=(f"ceil_div({rows}, {threads} // {KNOB})",
                         *[g.strip() for g in subject.spec.launch.grid[1:]]),
                   block=(threads, *[b.strip() for b in subject.spec.launch.block[1:]]),
                   writes_block=True)


def _rows(subject: Subject, found: el.Element) -> str | None:
    """The rows there are, as the spec writes them: where the guard bounds the row by one of
    the kernel's scalar parameters (`r < N`, an early `r >= N`), that argument's value in the
    spec (the grid then covers the rows exactly); None otherwise."""
    clause = found.guard.child_by_field_name("condition")
    test = ts.bare(clause.child_by_field_name("value") or clause.named_children[0])
    op = ts.text(test.child_by_field_name("operator")) if test.type == "binary_expression" \
        else ""
    if op != (">=" if found.early else "<"):
        return None
    bound = ts.bare(test.child_by_field_name("right"))
    names = [ts.text(p.child_by_field_name("declarator")) for p in ts.parameters(subject.kernel)]
    if bound.type != "identifier" or ts.text(bound) not in names or \
            len(names) != len(subject.spec.args):
        return None
    arg = subject.spec.args[names.index(ts.text(bound))]
    return f"({arg.value})" if arg.role.value == "scalar" and arg.value is not None else None


def _block_size(subject: Subject, block: str) -> int | str:
    """The threads a block has as written, or the most a parameter gives it (every value a
    whole number of warps), or why the team cannot know them."""
    if block.isdigit():
        return int(block)
    param = next((p for p in subject.spec.params if p.name == block), None)
    values = [v for v in (param.values if param else ()) if isinstance(v, int)]
    if param is None or not values or len(values) != len(param.values) or \
            any(v % WARP for v in values):
        return (f"the block size is an expression ({block}) and no parameter of whole warps: "
                "the team must know how many threads a block has")
    return max(values)


# --- reading ---------------------------------------------------------------------------------

def _row(subject: Subject) -> Row | str:
    found = dealing.dealt_element(subject)
    if isinstance(found, str):
        return found
    body = ts.body(subject.kernel)
    if found.early:
        work = found.work(body)
    else:
        block = found.guard.child_by_field_name("consequence")
        if block.type != "compound_statement":
            return "the guard's work is not a block in braces"
        work = ts.statements(block)
    jump = next((n for s in work for n in ts.walk(s) if n.type in ("return_statement",
                                                                   "goto_statement")), None)
    if jump is not None:
        return (f"the row's work returns (line {ts.first_line(jump)}): the team's threads must "
                "all reach the combinations")
    if _clamp(found) is None:
        return (f"the guard is not one bound on {found.name} (`{found.name} < N`, or `>=` "
                "with an early return): threads past the last row could not work on it")
    declared = _declarations([s for s in ts.statements(body) if s.end_byte <=
                              found.guard.start_byte] + list(work))
    loops: list[Loop] = []
    for s in work:
        if s.type not in ts.LOOPS or isinstance(st.inductions(s), str):
            continue
        loop = _loop(s, found, declared, loops)
        if isinstance(loop, str):
            return loop
        loops.append(loop)
    if not loops:
        return ("the row's work has no loop of its own whose steps can be dealt out (`for (int "
                "j = A; j < B; ++j)`, or a while stepped by its last statement): nothing to share")
    why = _after_loops(work, loops) or _sums(work, loops, declared)
    if why:
        return why
    first = [s for s in work if not any(s == loop.node for loop in loops) and _stores(s)]
    why = _first_unfit(first) or _read_back(subject, work, loops, first)
    if why:
        return why
    return Row(found, tuple(work), tuple(loops), tuple(first), _layout(subject, loops))


def _loop(node: Node, found: el.Element, declared: dict[str, Node],
          earlier: list[Loop]) -> Loop | str:
    line = ts.first_line(node)
    inductions = st.inductions(node)
    assert not isinstance(inductions, str)
    driven = {i.name for i in inductions}
    body = rd.body_of(node)
    if body.jump:
        return f"{body.jump} (line {line})"
    for name, _, _ in body.updates:
        if name in driven or name == found.name:
            return f"the loop at line {line} changes {name}, which steps it or names the row"
        if name not in declared:
            return f"the loop at line {line} changes {name}, declared outside the row's work"
    combine = body.combine()
    if isinstance(combine, str):
        return f"{combine} (line {line})"
    read = rd.read_elsewhere(node, set(combine), body.sanctioned)
    if read:
        return f"the loop at line {line} reads {read} beyond accumulating it"
    if rd.bounded_by(node, set(combine)):
        return f"the loop at line {line}'s bounds depend on what it accumulates"
    accumulators = []
    for name, kind in combine.items():
        acc = rd.accumulator(name, kind, declared[name])
        if isinstance(acc, str):
            return acc
        accumulators.append(acc)
    stores = []
    for s in body.stores:
        target = ts.assigned(s)
        base, index = ts.address(target)
        if base is None or ts.stride(index, driven) is None and base not in driven:
            return (f"the loop at line {line} stores to {ts.text(target)}, which does not move "
                    "with the loop's variable: two threads of the team could store there")
        statement = _statement(s, node)
        if statement is None:
            return (f"the loop at line {line} stores inside an expression "
                    f"({ts.text(s)}): a thread past the last row could not be kept from it")
        stores.append(statement)
    return Loop(node, inductions, tuple(accumulators), tuple(stores))


def _after_loops(work: list[Node], loops: list[Loop]) -> str:
    """The variables a loop steps are not read after it before they are set again (each
    thread leaves them elsewhere); those its header declares end with it."""
    for loop in loops:
        later = [s for s in work if s.start_byte >= loop.node.end_byte]
        init = loop.node.child_by_field_name("initializer")
        scoped = {d for d, _ in ts.declarators(init)} if init is not None and \
            init.type == "declaration" else set()
        stepped = {i.name for i in loop.inductions if i.name not in scoped and
                   ts.reads_first(later, i.name)}
        if stepped:
            return (f"what follows the loop at line {ts.first_line(loop.node)} uses "
                    f"{', '.join(sorted(stepped))}, which it steps")
    return ""


def _sums(work: list[Node], loops: list[Loop], declared: dict[str, Node]) -> str:
    """Each thread starts a sum at 0: it must start there, unchanged until its one loop."""
    for k, loop in enumerate(loops):
        for a in loop.accumulators:
            if a.combine != SUM:
                continue
            if not rd.is_zero(a.init):
                return f"the sum {a.name} does not start at a literal 0"
            if any(a.name in {x.name for x in other.accumulators} for other in loops[k + 1:]):
                return f"the sum {a.name} is accumulated by two loops"
            between = [s for s in work if declared[a.name].end_byte <= s.start_byte and
                       s.end_byte <= loop.node.start_byte]
            if any(ts.text(t) == a.name for s in between for n in ts.walk(s)
                   if (t := ts.assigned(n)) is not None):
                return f"the sum {a.name} changes before its loop"
    return ""


def _first_unfit(first: list[Node]) -> str:
    for s in first:
        if s.type == "declaration":
            return f"a declaration stores to memory (line {ts.first_line(s)})"
        names = {ts.text(t) for n in ts.walk(s) if (t := ts.assigned(n)) is not None and
                 t.type == "identifier"}
        local = {d for n in ts.walk(s) if n.type == "declaration" for d, _ in ts.declarators(n)}
        if names - local:
            return (f"the statement at line {ts.first_line(s)} stores to memory and changes "
                    f"{', '.join(sorted(names - local))}: only one thread of the team may run it")
    return ""


def _read_back(subject: Subject, work: list[Node], loops: list[Loop],
               first: list[Node]) -> str:
    """What the row stores it may read back only where the same thread stored it: in the same
    loop, or in an earlier one with the same header, at the same address as written."""
    params = {p.name for p in ts.pointer_params(subject.kernel)}
    roots = {p: p for p in params} | ts.derived_pointers(ts.body(subject.kernel), params)
    def root(base: str) -> str:
        return roots.get(base, base)
    written: dict[str, list[tuple[str, str, Loop]]] = {}  # root -> (base, index, loop)
    for loop in loops:
        for s in rd.body_of(loop.node).stores:
            base, index = ts.address(ts.assigned(s))
            assert base is not None
            written.setdefault(root(base), []).append((base, ts.compact(index) if index
                                                       is not None else "", loop))
    by_first = {root(b) for s in first for n in ts.walk(s)
                if (t := ts.assigned(n)) is not None and (b := ts.address(t)[0]) is not None}
    for n in (n for s in work for n in ts.walk(s)):
        base, index = ts.address(n) if n.type in ("subscript_expression",
                                                "pointer_expression") else (None, None)
        if base is None or (root(base) not in written and root(base) not in by_first):
            continue
        if root(base) in by_first:
            if root(base) in written or not _stored_here(n):
                return (f"the row reads {ts.text(n)} (line {ts.first_line(n)}), which one "
                        "thread of the team stores")
            continue
        inside = next((x for x in loops if ts.inside(n, x.node)), None)
        key = ts.compact(index) if index is not None else ""
        if inside is None or not any(b == base and i == key and (w == inside or (
                w.node.start_byte < inside.node.start_byte and _header(w) == _header(inside)))
                for b, i, w in written[root(base)]):
            return (f"the row reads back {ts.text(n)} (line {ts.first_line(n)}), which another "
                    "thread of the team may have stored")
    return ""


def _stored_here(n: Node) -> bool:
    """`n` is the target of a plain store (`a[k] = ...`), not a read."""
    parent = n.parent
    return parent is not None and parent.type == "assignment_expression" and \
        parent.child_by_field_name("left") == n and \
        ts.text(parent.child_by_field_name("operator")) == "="


def _header(loop: Loop) -> str:
    node = loop.node
    if node.type == "for_statement":
        return "".join(ts.compact(node.child_by_field_name(f)) for f in
                       ("initializer", "condition", "update") if node.child_by_field_name(f))
    return ts.compact(node.child_by_field_name("condition")) + "".join(
        ts.compact(x) for x in st.steps(node))


def _layout(subject: Subject, loops: list[Loop]) -> str:
    """ROWS where a loop walks contiguous addresses, else COLUMNS (a walk down columns)."""
    params = {p.name for p in ts.pointer_params(subject.kernel)}
    body = ts.body(subject.kernel)
    name = el.element(subject.kernel)
    assert not isinstance(name, str)
    return ROWS if any(ts.walks_contiguous(loop.node, loop.inductions, params, body, name.name)
                       for loop in loops) else COLUMNS


def _statement(store: Node, loop: Node) -> Node | None:
    """The expression statement a store is the whole of (`o[j] = v;`, `o[j] /= s;`)."""
    parent = store.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent if parent is not None and parent.type == "expression_statement" and \
        ts.inside(parent, loop) else None


def _stores(node: Node) -> bool:
    return any((t := ts.assigned(n)) is not None and t.type != "identifier" or
               n.type == "call_expression" and rd.effects(n) for n in ts.walk(node))


def _declarations(stmts: list[Node]) -> dict[str, Node]:
    return {name: s for s in stmts if s.type == "declaration" for name, _ in ts.declarators(s)}


def _clamp(found: el.Element) -> str | None:
    """The last row the guard lets through, as C text (`N - 1` for `r < N` or an early `r >=
    N`), None for a guard that is not one bound on the row."""
    clause = found.guard.child_by_field_name("condition")
    test = ts.bare(clause.child_by_field_name("value") or clause.named_children[0])
    if test.type != "binary_expression":
        return None
    op = ts.text(test.child_by_field_name("operator"))
    left, right = ts.bare(test.child_by_field_name("left")), test.child_by_field_name("right")
    if left.type != "identifier" or ts.text(left) != found.name or \
            ts.mentions(right, {found.name}):
        return None
    bound = ts.text(right)
    last = {"<": f"({bound}) - 1", "<=": f"({bound})"} if not found.early else \
        {">=": f"({bound}) - 1", ">": f"({bound})"}
    return last.get(op)


# --- writing ---------------------------------------------------------------------------------

def _edits(subject: Subject, row: Row, block: int) -> tuple[Edit, ...]:
    data = subject.data
    found = row.element
    indent = ts.indentation(data, found.decl.start_byte) or ""
    values = {TEAM: tpl.value(KNOB), WIDE: f"{{% if {KNOB} > {WARP} %}}", END: "{% endif %}"}
    edits = [_index(data, found, indent, row.layout, values),
             _guard(data, found, row.layout, values)]
    for number, loop in enumerate(row.loops):
        edits += dealing.step_edits(data, loop.node, loop.inductions, ON, LANE,
                                    tpl.value(KNOB))
        edits += [edit for s in loop.stores for edit in _predicated(s)]
        if loop.accumulators:
            lead = ts.indentation(data, loop.node.start_byte) or indent
            edits.append(Edit(loop.node.end_byte, loop.node.end_byte, tpl.insert(
                ON, tpl.filled(_combine(loop, lead, row.layout, number, block), values))))
    for s in row.first:
        edits.append(Edit(s.start_byte, s.start_byte, tpl.insert(
            ON, tpl.literal(f"if ({LIVE} && {LANE} == 0) {{ "))))
        edits.append(Edit(s.end_byte, s.end_byte, tpl.insert(ON, tpl.literal(" }"))))
    return tuple(edits)


def _predicated(store: Node) -> tuple[Edit, ...]:
    """The store made only by a live team: `if (live) store`, in braces where the store is the
    unbraced branch of an `if` or the body of a loop (so that an `else` after it keeps its
    `if`)."""
    if store.parent is not None and store.parent.type == "compound_statement":
        return (Edit(store.start_byte, store.start_byte,
                     tpl.insert(ON, tpl.literal(f"if ({LIVE}) "))),)
    return (Edit(store.start_byte, store.start_byte,
                 tpl.insert(ON, tpl.literal(f"{{ if ({LIVE}) "))),
            Edit(store.end_byte, store.end_byte, tpl.insert(ON, tpl.literal(" }"))))


def _index(data: bytes, found: el.Element, indent: str, layout: str,
           values: dict[str, str]) -> Edit:
    """The row index of the thread's team, and its place in the team (its lane)."""
    decl = found.decl
    declarator = decl.children_by_field_name("declarator")[0]
    prefix = decode(data[decl.start_byte:declarator.start_byte]).replace("const ", "")
    type_text = ts.text(decl.child_by_field_name("type"))
    cast = "" if type_text == "auto" else f"({type_text})"
    if layout == ROWS:
        text = (f"const int {LANE} = threadIdx.x % {TEAM};  // the thread's place in its row's "
                f"team of {TEAM}\n{indent}{prefix}{found.name} = {cast}(blockIdx.x * (blockDim.x "
                f"/ {TEAM}) + threadIdx.x / {TEAM});")
    else:
        text = (f"const int {LOCAL}rows = blockDim.x / {TEAM};  // rows a block covers, {TEAM} "
                f"threads each, {LOCAL}rows apart\n{indent}const int {LANE} = threadIdx.x / "
                f"{LOCAL}rows;\n{indent}{prefix}{found.name} = {cast}(blockIdx.x * {LOCAL}rows + "
                f"threadIdx.x % {LOCAL}rows);")
    return Edit(decl.start_byte, decl.end_byte,
                tpl.when(ON, tpl.filled(text, values), ts.text(decl)))


def _guard(data: bytes, found: el.Element, layout: str, values: dict[str, str]) -> Edit:
    """Threads past the last row work on the last row and store nothing (so that they reach
    every barrier of their block); a block with no row of its own, or a grid with no row at
    all, returns at once."""
    guard, name = found.guard, found.name
    clause = guard.child_by_field_name("condition")
    condition = clause.child_by_field_name("value") or clause.named_children[0]
    last = _clamp(found)
    first = f"blockIdx.x * (blockDim.x / {TEAM})" if layout == ROWS else \
        f"blockIdx.x * {LOCAL}rows"  # the block's first row
    ahead = ts.substituted(condition, {}, {name: f"({first})"})
    live = f"!({ts.text(condition)})" if found.early else f"({ts.text(condition)})"
    idle = f"({ahead})" if found.early else f"!({ahead})"
    text = (f"const bool {LIVE} = {live};  // a row for this thread's team\n"
            f"{ts.indentation(data, guard.start_byte) or ''}if (!{LIVE}) {{ if ((long long)"
            f"({last}) < 0 || {idle}) return; {name} = {last}; }}  // past the last row: work "
            "on it")
    if found.early:
        return Edit(guard.start_byte, guard.end_byte,
                    tpl.when(ON, tpl.filled(text, values), ts.text(guard)))
    brace = guard.child_by_field_name("consequence").children[0]
    inner = (ts.indentation(data, guard.start_byte) or "") + "    "
    return Edit(guard.start_byte, brace.end_byte, tpl.when(
        ON, tpl.filled("{\n" + inner + text.replace("\n", "\n    "), values),
        decode(data[guard.start_byte:brace.end_byte])))


def _combine(loop: Loop, indent: str, layout: str, number: int, block: int) -> str:
    """After the loop: each accumulator combined across the team, every thread holding the
    row's value (plain text; TEAM stands for the knob)."""
    inner, deeper = indent + "    ", indent + "        "
    def joined(a: Accumulator, other: str) -> str:
        return f"{a.name} + {other}" if a.combine == SUM else f"{a.combine}({a.name}, {other})"
    slots = {a.name: f"{LOCAL}{a.name}_{number}" for a in loop.accumulators}
    lines = [""]
    if layout == ROWS:
        lines += [f"{indent}for (int {LOCAL}o = {WARP // 2}; {LOCAL}o > 0; {LOCAL}o /= 2) {{  "
                  f"// across the warp"]
        lines += [f"{inner}{a.name} = {joined(a, _shuffled(a.name))};"
                  for a in loop.accumulators]
        lines += [f"{indent}}}", f"{indent}{WIDE}{{  // across the warps of the team"]
        lines += [f"{inner}__shared__ {a.type} {slots[a.name]}[{1024 // WARP}];"
                  for a in loop.accumulators]
        lines += [f"{inner}if (threadIdx.x % {WARP} == 0) {slots[a.name]}[threadIdx.x / "
                  f"{WARP}] = {a.name};" for a in loop.accumulators]
        lines += [f"{inner}__syncthreads();",
                  f"{inner}const int {LOCAL}w = threadIdx.x / {TEAM} * ({TEAM} / {WARP});"]
        lines += [f"{inner}{a.name} = {slots[a.name]}[{LOCAL}w];" for a in loop.accumulators]
        lines += [f"{inner}for (int {LOCAL}q = 1; {LOCAL}q < {TEAM} / {WARP}; ++{LOCAL}q) {{"]
        lines += [f"{deeper}{a.name} = {joined(a, f'{slots[a.name]}[{LOCAL}w + {LOCAL}q]')};"
                  for a in loop.accumulators]
        lines += [f"{inner}}}", f"{inner}__syncthreads();", f"{indent}}}{END}"]
    else:
        lines += [f"{indent}{{  // across the team, {LOCAL}rows threads apart"]
        lines += [f"{inner}__shared__ {a.type} {slots[a.name]}[{block}];"
                  for a in loop.accumulators]
        lines += [f"{inner}{slots[a.name]}[threadIdx.x] = {a.name};" for a in loop.accumulators]
        lines += [f"{inner}__syncthreads();",
                  f"{inner}const int {LOCAL}w = threadIdx.x % {LOCAL}rows;"]
        lines += [f"{inner}{a.name} = {slots[a.name]}[{LOCAL}w];" for a in loop.accumulators]
        lines += [f"{inner}for (int {LOCAL}q = 1; {LOCAL}q < {TEAM}; ++{LOCAL}q) {{"]
        lines += [f"{deeper}{a.name} = {joined(a, _apart(slots[a.name]))};"
                  for a in loop.accumulators]
        lines += [f"{inner}}}", f"{inner}__syncthreads();", f"{indent}}}"]
    return "\n".join(lines)


def _shuffled(name: str) -> str:
    return f"__shfl_xor_sync(0xffffffffu, {name}, {LOCAL}o)"


def _apart(slots: str) -> str:
    return f"{slots}[{LOCAL}w + {LOCAL}q * {LOCAL}rows]"


MOVE = Move(
    NAME, ("small_grid", "uncoalesced_access", "memory_latency", "latency_bound"),
    "shares each row among a team of threads (a warp, a block, or threads a column apart): "
    "its loops strided by the team, its sums, minima and maxima combined across it", apply,
    knobs=(KNOB,),
    never="never changes the kernel's arguments; touches only loops whose iterations store "
          "where no other thread of the team stores and combine only by sums, minima and "
          "maxima; the sums are taken in another order (the spec's tolerance judges it)")
