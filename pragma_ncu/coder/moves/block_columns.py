"""block_columns: a block-per-column reduction, whose threads walk down one column (a warp's
lanes reading addresses a row apart), re-laid so that a block takes COLS adjacent columns:
adjacent threads read adjacent columns (coalesced), blockDim.x / COLS row groups stride the
rows, and the block's tree becomes a per-column combination (warp shuffles across the row
groups of a warp, then shared memory across the warps), one thread a column storing.

Called for by uncoalesced accesses (each warp load uses 4 bytes of every 32-byte sector it
fetches, so L1 and L2 move eight times the bytes used) and what they cause (exposed latency,
L1/L2 traffic), and by what the tree costs (barriers, divergence, conflicts), which the
combination replaces. The shape it reads:

    int c = blockIdx.x;                                  the column: the output index
    float acc = 0.0f;                                    declarations only
    for (int r = threadIdx.x; r < N; r += blockDim.x)    one loop down the column
        acc += x[(size_t)r * C + c];                     (loads that add c to the address)
    buf[threadIdx.x] = acc;
    __syncthreads();
    <a tree over buf>                                    (`pragma_ncu.syntax.trees`)
    if (threadIdx.x == 0) out[c] = buf[0];               stores only under thread 0's test

becomes, for COLS = 8 (c = blockIdx.x * 8 + threadIdx.x % 8, clamped to the last column so
that every thread of the last block reaches the barriers; `r` from threadIdx.x / 8 by
blockDim.x / 8; the tree replaced by the combination, which leaves column k's value in slot
k; `buf[0]` read as `buf[threadIdx.x % 8]`; thread 0's test `threadIdx.x < 8` and the column
in range). The grid, which must be the columns' count and a scalar argument the kernel gets,
becomes ceil_div(G, COLS); COLS = 1 is the source and the launch as written.

The loop must accumulate only the value the threads store in their slots, by the tree's own
combine (a sum starting at a literal 0, or the same min or max), and read nothing of the
thread's index beyond its rows, so that regrouping the rows leaves each column's result the
same (a sum in another order, judged by the spec's tolerance; a min or max starting where no
thread differs); it must store nothing, nothing after the tree may read a thread's part or the
loop's variable, and after the tree memory is stored and the column read only under thread 0's
test, whose work reads nothing of the thread's index (so that the threads of a column past the
last, clamped to it, store nothing, and each column's first thread does what thread 0 did).
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import reducing
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject, decode
from pragma_ncu.syntax import loops as st
from pragma_ncu.syntax import reductions as rd
from pragma_ncu.syntax import trees as tr

NAME = "block_columns"
KNOB = "PNCU_COLS"
ON = f"{KNOB} != 1"
VALUES = (1, 8, 16, 32)
LOCAL = reducing.LOCAL
COL = f"{LOCAL}col"  # the unclamped column
THREAD, BLOCK = reducing.THREAD, "blockIdx.x"
COLS = "@COLS@"  # the knob's value in the plain text below
FAMILY = {rd.SUM: "sum", "fmaxf": "max", "fmax": "max", "max": "max", "fminf": "min",
          "fmin": "min", "min": "min"}


@dataclass(frozen=True)
class Column:
    reading: reducing.Reading
    decl: Node  # `int c = blockIdx.x;`
    name: str
    loop: Node
    start: Node  # where the loop starts: the thread's index
    step: Node  # how far it steps: the block
    zeros: tuple[Node, ...]  # the `0` of each read of slot 0 after the tree
    tests: tuple[Node, ...]  # the condition of each `if (threadIdx.x == 0)` after the tree
    extent: str  # the kernel's scalar the columns end at


def apply(subject: Subject) -> Applied | Refused:
    if not subject.one_dimensional:
        return Refused(NAME, "the launch is not one-dimensional")
    found = reducing.read(subject)
    if isinstance(found, str):
        return Refused(NAME, found)
    column = _column(subject, found)
    if isinstance(column, str):
        return Refused(NAME, column)
    grid = subject.spec.launch.grid[0].strip()
    t = found.trees[0]
    site = (f"column {column.name} of {grid}: COLS adjacent columns a block, {found.block} / "
            f"COLS row groups down them (the loop at line {ts.first_line(column.loop)}); the "
            f"tree over {t.array} at line {ts.first_line(t.loop)} combines each column's row "
            f"groups; grid {grid} -> ceil_div({grid}, COLS)")
    return Applied(NAME, (Knob(KNOB, VALUES, 1),), _edits(subject, column), (site,),
                   grid=(f"ceil_div({grid}, {KNOB})",))


# --- reading ---------------------------------------------------------------------------------

def _column(subject: Subject, found: reducing.Reading) -> Column | str:
    if len(found.trees) != 1:
        return (f"the kernel has {len(found.trees)} trees: the move re-lays one column's "
                "reduction a block")
    body = ts.body(subject.kernel)
    stmts = ts.statements(body)
    tree = found.trees[0]
    at = {s.start_byte: k for k, s in enumerate(stmts)}
    names = tr.holding(body, BLOCK)
    decl = next((s for s in stmts if s.type == "declaration" and
                 {d for d, _ in ts.declarators(s)} & names), None)
    if tree.loop.start_byte not in at or decl is None or len(ts.declarators(decl)) != 1:
        return ("no column index of a block (`int c = blockIdx.x;` in the kernel's body, the "
                "tree after it there)")
    name = ts.declarators(decl)[0][0]
    first, last = at[decl.start_byte], at[tree.loop.start_byte]
    loops = [s for s in stmts[first + 1:last] if s.type in ts.LOOPS]
    if len(loops) != 1:
        return (f"the column's work before its tree is not one loop ({len(loops)} loops "
                "between the column index and the tree)")
    loop = loops[0]
    why = _builtins(body, decl) or _setup(stmts[:at[loop.start_byte]])
    if why:
        return why
    read = _loop(subject, found, loop, name)
    if isinstance(read, str):
        return read
    why = _handover(subject, found, loop, stmts[at[loop.start_byte] + 1:])
    if why:
        return why
    after = _after(subject, found, stmts[last + 1:], name)
    if isinstance(after, str):
        return after
    extent = _extent(subject)
    if extent is None:
        return (f"the grid ({subject.spec.launch.grid[0].strip()}) is no scalar argument of "
                "the kernel: the rewrite must compare its columns with the count the grid "
                "covers")
    if ts.indentation(subject.data, decl.start_byte) is None:
        return "the column index does not start its own line"
    return Column(found, decl, name, loop, *read, *after, extent)


def _builtins(body: Node, decl: Node) -> str:
    """The kernel reads the block's index only in the column's declaration, and nothing of
    the grid (a block's place changes with the columns it takes)."""
    for n in ts.walk(body):
        if n.type == "field_expression" and not ts.inside(n, decl) and ts.text(
                n.child_by_field_name("argument")) in ("blockIdx", "gridDim"):
            return (f"the kernel reads {ts.text(n)} outside its column index (line "
                    f"{ts.first_line(n)}): a block's place would change")
    return ""


def _setup(before: list[Node]) -> str:
    """What precedes the loop is declarations with no effects (they may load and read the
    column: it is clamped to the last one)."""
    for s in before:
        if s.type != "declaration" or rd.effects(s):
            return (f"the statement at line {ts.first_line(s)} precedes the column's loop: only "
                    "declarations without effects may")
    return ""


def _loop(subject: Subject, found: reducing.Reading, loop: Node,
          name: str) -> tuple[Node, Node] | str:
    """(where the loop starts, how far it steps) of a loop that strides the column's rows by
    the block from the thread's index and only accumulates, reading the column along the
    threads."""
    line = ts.first_line(loop)
    steps = st.inductions(loop)
    if isinstance(steps, str):
        return steps
    step = st.step_of(steps[0].update) if len(steps) == 1 else None
    values = {**subject.constants, "blockDim.x": found.block}
    if len(steps) != 1 or step is None or not tr.is_builtin(
            steps[0].start, THREAD, set(found.threads)) or \
            (ts.compact(step) != "blockDim.x" and tr.constant(step, values) != found.block):
        return (f"the loop at line {line} does not stride the rows by the block from the "
                "thread's index (`for (int r = threadIdx.x; r < N; r += blockDim.x)`)")
    body = ts.body(subject.kernel)
    why = _thread_free(body, loop, steps[0].name)
    if why:
        return why
    pointers = {p.name for p in ts.pointer_params(subject.kernel)}
    row = next((a.node for a in ts.accesses(loop, pointers)
                if a.load and ts.stride(ts.address(a.node)[1], {steps[0].name}) == "unit"),
               None)
    if row is not None:
        return (f"the loop at line {line} reads {ts.text(row)} at adjacent addresses across "
                "the block's threads (along a row): coalesced as written")
    if not ts.walks_across(loop, pointers, body, name):
        return (f"no load of the loop at line {line} adds {name} to its address: adjacent "
                "columns would not be adjacent addresses")
    return steps[0].start, step


def _thread_free(fn_body: Node, loop: Node, variable: str) -> str:
    """Why a row's part of the column would change with the thread that takes it: the loop's
    body reads the thread's index, or a name computed from it, beyond its own variable, what
    it declares and what it accumulates."""
    inner = loop.child_by_field_name("body")
    own = {variable, *(u for u, _, _ in rd.body_of(loop).updates),
           *(d for n in ts.walk(inner) if n.type == "declaration" for d, _ in ts.declarators(n))}
    if ts.uses_builtin(inner, "threadIdx") or ts.mentions(inner, ts.lane_varying(fn_body) - own):
        return (f"the loop at line {ts.first_line(loop)} reads the thread's index beyond its "
                "rows: a row's part would change with the thread that takes it")
    return ""


def _handover(subject: Subject, found: reducing.Reading, loop: Node, later: list[Node]) -> str:
    """Why what follows the loop (`later`) does not hand each thread's part to the tree alone:
    its slot store and a barrier, then the tree, and nothing after reading the part or the
    loop's variable."""
    tree = found.trees[0]
    stepped = {i.name for i in st.inductions(loop) if not isinstance(i, str)}
    if any(ts.mentions(s, stepped) for s in later):
        return f"what follows the loop uses {', '.join(sorted(stepped))}, which it steps"
    acc = _slot_store(later[:later.index(tree.loop)], tree, set(found.threads))
    if acc is None:
        return (f"the loop is not followed by `{tree.array}[threadIdx.x] = <its accumulator>; "
                "__syncthreads();` before the tree")
    if any(ts.mentions(s, {acc}) for s in later[later.index(tree.loop) + 1:]):
        return (f"{acc}, a thread's part of its column, is used after the tree: a thread's "
                "part changes with the rows it takes")
    return _accumulates(subject, found, loop, acc)


def _slot_store(between: list[Node], tree: tr.Tree, threads: set[str]) -> str | None:
    """The accumulator the thread stores in its slot right before the tree (`buf[tid] =
    acc; __syncthreads();`, all that stands between the loop and the tree), or None."""
    if len(between) != 2 or ts.compact(between[1]) != "__syncthreads();" or \
            between[0].type != "expression_statement" or not between[0].named_children:
        return None
    store = between[0].named_children[0]
    if store.type != "assignment_expression" or \
            ts.text(store.child_by_field_name("operator")) != "=":
        return None
    base, index = ts.address(store.child_by_field_name("left"))
    value = store.child_by_field_name("right")
    if base != tree.array or value.type != "identifier" or \
            not tr.is_builtin(index, THREAD, threads):
        return None
    return ts.text(value)


def _accumulates(subject: Subject, found: reducing.Reading, loop: Node, acc: str) -> str:
    """Why the loop's rows could not be regrouped: it must accumulate `acc` alone, by the
    tree's combine, from a start no thread differs in (a sum from a literal 0)."""
    tree, line = found.trees[0], ts.first_line(loop)
    body = rd.body_of(loop)
    combine = body.combine()
    if body.jump or body.stores or isinstance(combine, str) or set(combine) != {acc}:
        return (f"the loop at line {line} does not only accumulate {acc} (no stores, no jumps, "
                "no other value carried): its rows could not be regrouped")
    kind = combine[acc]
    if FAMILY.get(kind) != FAMILY.get(tree.combine):
        return (f"the loop accumulates {acc} by {kind} and the tree combines by {tree.combine}: "
                "regrouping the rows would change the result")
    if rd.read_elsewhere(loop, {acc}, body.sanctioned) or rd.bounded_by(loop, {acc}):
        return f"the loop reads {acc} beyond accumulating it"
    decls = {d: s for s in ts.statements(ts.body(subject.kernel)) if s.type == "declaration"
             for d, _ in ts.declarators(s)}
    if acc not in decls:
        return f"{acc} is not declared in the kernel's body before its loop"
    declared = rd.accumulator(acc, kind, decls[acc])
    if isinstance(declared, str):
        return declared
    if FAMILY[kind] == "sum" and not rd.is_zero(declared.init):
        return f"the sum {acc} does not start at a literal 0 (each row group starts there)"
    if ts.uses_builtin(decls[acc], "threadIdx") or ts.mentions(decls[acc], set(found.threads)):
        return f"{acc} starts at a value that differs between the threads"
    return ""


def _after(subject: Subject, found: reducing.Reading, after: list[Node],
           name: str) -> tuple[tuple[Node, ...], tuple[Node, ...]] | str:
    """(the `0` of each read of slot 0, the conditions of thread 0's tests) after the tree,
    where the column is used and memory stored only under thread 0's tests."""
    tree = found.trees[0]
    pointers = {p.name for p in ts.pointer_params(subject.kernel)}
    tests = []
    for s in after:
        test = _thread_zero(s, set(found.threads))
        if test is not None:
            work = s.child_by_field_name("consequence")
            if ts.uses_builtin(work, "threadIdx") or ts.mentions(work, set(found.threads)):
                return (f"thread 0's work at line {ts.first_line(s)} reads the thread's index: "
                        "each column's first thread would take it")
            tests.append(test)
            continue
        if ts.mentions(s, {name}) or any(a.store for a in ts.accesses(s, pointers)) or \
                rd.effects(s):
            return (f"the statement at line {ts.first_line(s)} stores or uses the column "
                    "outside an `if (threadIdx.x == 0)`: only one thread a column may")
    if not tests:
        return "no `if (threadIdx.x == 0)` after the tree stores the column's value"
    slots = [n for s in after for n in ts.walk(s)
             if n.type == "subscript_expression" and ts.address(n)[0] == tree.array]
    stored = next((n for n in slots if n.parent is not None and ts.assigned(n.parent) == n),
                  None)
    if stored is not None:
        return (f"{ts.text(stored)} is stored after the tree (line {ts.first_line(stored)}): "
                "the combination leaves the columns' values in the first slots")
    return tuple(ts.address(n)[1] for n in slots), tuple(tests)


def _thread_zero(s: Node, threads: set[str]) -> Node | None:
    """The condition of `if (threadIdx.x == 0) ...` (no else; `0 == tid`), else None."""
    if s.type != "if_statement" or s.child_by_field_name("alternative") is not None:
        return None
    clause = s.child_by_field_name("condition")
    test = clause.child_by_field_name("value") or clause.named_children[0]
    cond = ts.bare(test)
    if cond.type != "binary_expression" or ts.text(cond.child_by_field_name("operator")) != "==":
        return None
    sides = [cond.child_by_field_name("left"), cond.child_by_field_name("right")]
    if any(tr.is_builtin(a, THREAD, threads) and ts.compact(ts.bare(b)) == "0"
           for a, b in (sides, sides[::-1])):
        return test
    return None


def _extent(subject: Subject) -> str | None:
    """The kernel's scalar parameter the spec's grid is (the columns' count), if one is."""
    grid = subject.spec.launch.grid[0].strip()
    params = ts.parameters(subject.kernel)
    for k, arg in enumerate(subject.spec.args):
        if arg.role == "scalar" and isinstance(arg.value, str) and \
                "".join(arg.value.split()) == "".join(grid.split()) and k < len(params):
            declarator = params[k].child_by_field_name("declarator")
            if declarator is not None and declarator.type == "identifier":
                return ts.text(declarator)
    return None


# --- writing ---------------------------------------------------------------------------------

def _edits(subject: Subject, column: Column) -> tuple[Edit, ...]:
    data = subject.data
    values = {COLS: tpl.value(KNOB)}
    found = column.reading
    tree, type_text = found.trees[0], found.types[0]
    def swap(node: Node, text: str) -> Edit:
        return Edit(node.start_byte, node.end_byte,
                    tpl.when(ON, tpl.filled(text, values), ts.text(node)))
    lead = ts.indentation(data, tree.loop.start_byte) or ""
    edits = [_index(data, column, values),
             swap(column.start, f"{_operand(column.start)} / {COLS}"),
             swap(column.step, f"{_operand(column.step)} / {COLS}"),
             swap(tree.loop, _combination(tree, type_text, lead))]
    edits += [swap(z, f"{THREAD} % {COLS}") for z in column.zeros]
    edits += [swap(t, f"{THREAD} < {COLS} && {COL} < {column.extent}") for t in column.tests]
    return tuple(edits)


def _operand(node: Node) -> str:
    return ts.text(node) if node.type in ("identifier", "field_expression",
                                          "number_literal") else f"({ts.text(node)})"


def _index(data: bytes, column: Column, values: dict[str, str]) -> Edit:
    """The block's COLS adjacent columns, and the thread's among them: clamped to the last,
    so that every thread of the last block reaches the barriers and loads in range."""
    decl = column.decl
    indent = ts.indentation(data, decl.start_byte) or ""
    declarator = decl.children_by_field_name("declarator")[0]
    prefix = decode(data[decl.start_byte:declarator.start_byte])  # "const int "
    type_text = ts.text(decl.child_by_field_name("type"))
    cast = "" if type_text == "auto" else f"({type_text})"
    extent = column.extent
    text = (f"const long long {COL} = (long long){BLOCK} * {COLS} + {THREAD} % {COLS};  // "
            f"{COLS} adjacent columns a block\n{indent}{prefix}{column.name} = {cast}({COL} < "
            f"{extent} ? {COL} : {extent} - 1);  // past the last column: work on it, store "
            "nothing")
    return Edit(decl.start_byte, decl.end_byte,
                tpl.when(ON, tpl.filled(text, values), ts.text(decl)))


def _combination(t: tr.Tree, type_text: str, indent: str) -> str:
    """The tree's replacement (plain text; COLS stands for the knob): each column's row groups
    combined, across a warp by shuffles (lanes COLS apart hold one column), then across the
    warps in shared memory; column k's value left in slot k."""
    inner, deeper, deepest = indent + "    ", indent + "        ", indent + "            "
    part, v = f"{LOCAL}cols", f"{LOCAL}v"
    warp = reducing.WARP
    combine = t.combined(v, f"{LOCAL}u")
    lines = [f"{{  // each of the block's {COLS} columns: its row groups combined across a warp "
             "by shuffles, then across the warps",
             f"{inner}{type_text} {v} = {t.array}[{THREAD}];",
             *reducing.shuffles(type_text, combine, inner, f"{COLS} / 2"),
             f"{inner}__shared__ {type_text} {part}[{warp} * {COLS}];",
             f"{inner}if ({THREAD} % {warp} < {COLS}) {part}[{THREAD} / {warp} * {COLS} + "
             f"{THREAD} % {warp}] = {v};",
             f"{inner}__syncthreads();",
             f"{inner}if ({THREAD} < {COLS}) {{",
             f"{deeper}{v} = {part}[{THREAD}];",
             f"{deeper}for (int {LOCAL}q = 1; {LOCAL}q < blockDim.x / {warp}; ++{LOCAL}q) {{",
             f"{deepest}const {type_text} {LOCAL}u = {part}[{LOCAL}q * {COLS} + {THREAD}];",
             f"{deepest}{combine};",
             f"{deeper}}}",
             f"{deeper}{t.array}[{THREAD}] = {v};",
             f"{inner}}}",
             f"{inner}__syncthreads();",
             f"{indent}}}"]
    return "\n".join(lines)


MOVE = Move(
    NAME, ("uncoalesced_access", "memory_latency", "l1_bandwidth", "l2_bandwidth",
           "barrier_stall", "warp_divergence", "shared_bank_conflicts"),
    "gives a block-per-column reduction COLS adjacent columns a block, so that adjacent "
    "threads read adjacent addresses, and combines each column's row groups by shuffles in "
    "place of the block's tree", apply,
    knobs=(KNOB,),
    never="never changes the block or the kernel's arguments; touches only a column walked "
          "by one loop that only accumulates what the tree combines, stored only by thread 0; "
          "a sum is taken in another order (the spec's tolerance judges it)")
