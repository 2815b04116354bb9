"""vectorize_loops: a loop that threads share (a block-stride loop over a row, a team's loop,
a grid-stride loop) takes VEC consecutive iterations a thread, reading and writing its
contiguous arrays through one vector access each.

Called for when memory latency is exposed or DRAM traffic runs below the roofline in a kernel
whose threads walk contiguous memory together: `for (j = t; j < n; j += STEP)`, where t is the
thread's place among the STEP threads that share the loop (threadIdx.x and blockDim.x, a lane
`threadIdx.x % K` and K, the global index and gridDim.x * blockDim.x) reads one 4-byte element
a thread at a time; VEC of them through a 16-byte access put VEC times the bytes in flight per
instruction. An array is vectorized where every access the loop makes to it is `p[E + j]` with
E the same and unchanged by the loop; any other access stays as written, run for each of the
thread's VEC iterations in turn.

The threads that share the loop deal its iterations out in chunks of VEC: chunk q (a thread
takes chunks t, t + STEP, ...) covers iterations A + q * VEC to A + q * VEC + VEC - 1, and a
scalar loop over the same threads takes the last (n - A) % VEC; each chunk loads its arrays as
vectors, runs the body for its VEC iterations over registers, and stores. That path is taken
only when every vectorized array is aligned to the vector's width at the loop's first
iteration (a test every sharing thread makes alike); otherwise the loop runs as written. A loop
whose arrays are stored by one of its threads and read by another (another loop reading what
it stored, a store through another index) is left alone: the chunks change which thread takes
which iteration. VEC = 1 is the source as written.
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject
from pragma_ncu.syntax import index as ix
from pragma_ncu.syntax import loops as st
from pragma_ncu.syntax import reductions as rd

NAME = "vectorize_loops"
KNOB = "PNCU_LOOP_VEC"
ON = f"{KNOB} != 1"
VALUES = (1, 2, 4, 8)
MOST_BYTES = 16
LOCAL = "pncu_lv"  # the names this rewrite declares (other moves' pncu_ names may be there)
VEC = "@VEC@"
STRUCT = ("template <typename T, int N> struct alignas(sizeof(T) * N) pncu_lvvec { T v[N]; };  "
          "// N elements, read and written as one vector\n")


@dataclass(frozen=True)
class Array:
    name: str  # the pointer the accesses go through
    type: str
    size: int
    offset: Node | None  # E in p[E + j], None for p[j]
    nodes: tuple[Node, ...]
    load: bool
    store: bool
    guard: str = ""  # the test every store of it stands under, the same for the whole loop


@dataclass(frozen=True)
class Shared:
    """A loop that threads share, read: `for (T j = A + t; j < END; j += STEP)`."""

    loop: Node
    var: str
    type: str
    start: str  # A, as C text ("0" where the start is t alone)
    place: Node  # t
    step: Node
    end: str  # the first iteration past the loop, as C text
    arrays: tuple[Array, ...]


def apply(subject: Subject) -> Applied | Refused:
    loops: list[Shared] = []
    why: list[str] = []
    for node in ts.walk(ts.body(subject.kernel)):
        if node.type == "for_statement":
            found = _shared(subject, node)
            if isinstance(found, str):
                why.append(found)
            else:
                loops.append(found)
    if not loops:
        return Refused(NAME, "; ".join(dict.fromkeys(why)) or "the kernel has no for loop")
    if any(n.type == "identifier" and ts.text(n).startswith(LOCAL)
           for n in ts.walk(subject.kernel)):
        return Refused(NAME, f"the kernel has names of its own that begin with {LOCAL}")
    widest = max(a.size for loop in loops for a in loop.arrays)
    values = tuple(v for v in VALUES if v * widest <= MOST_BYTES)
    sites = tuple(f"the loop at line {ts.first_line(s.loop)}: "
                  f"{', '.join(a.name for a in s.arrays)} VEC iterations a thread as vectors "
                  "where aligned" for s in loops)
    edits = [e for s in loops for e in _edits(subject, s)]
    top = ts.definition_start(subject.kernel)
    edits.append(Edit(top, top, tpl.insert(ON, tpl.literal(STRUCT))))
    return Applied(NAME, (Knob(KNOB, values, 1),), tuple(edits), sites)


# --- reading ---------------------------------------------------------------------------------

def _shared(subject: Subject, loop: Node) -> Shared | str:
    line = ts.first_line(loop)
    inductions = st.inductions(loop)
    if isinstance(inductions, str) or len(inductions) != 1 or inductions[0].start is None \
            or inductions[0].sign != "+":
        return f"the loop at line {line} is not `for (T j = A + t; j < n; j += STEP)`"
    (i,) = inductions
    body = ts.body(subject.kernel)
    step = st.step_of(i.update)
    block = subject.spec.launch.block[0].strip()
    split = _place(i.start, body)
    if step is None or split is None or not ix.same_step(split[2], step, block
                                                        if block.isdigit() else None):
        return (f"the loop at line {line} is not shared by threads that each start at their "
                "place and step by their number")
    start, place, _ = split
    condition = loop.child_by_field_name("condition")
    op = ts.text(condition.child_by_field_name("operator"))
    left, right = condition.child_by_field_name("left"), condition.child_by_field_name("right")
    if op not in ("<", "<=") or ts.text(left) != i.name:
        return f"the loop at line {line} does not run while {i.name} < n"
    end = ts.text(right) if op == "<" else f"({ts.text(right)}) + 1"
    why = _body_unfit(loop, i.name)
    if why:
        return f"the loop at line {line} {why}"
    arrays = _arrays(subject, loop, i.name, place)
    if isinstance(arrays, str):
        return f"the loop at line {line}: {arrays}"
    declaration = loop.child_by_field_name("initializer")
    type_text = ts.text(declaration.child_by_field_name("type")) \
        if declaration.type == "declaration" else ""
    if not type_text or type_text == "auto":
        return f"the loop at line {line} does not declare {i.name} with its type"
    return Shared(loop, i.name, type_text, start, place, step, end, tuple(arrays))


def _place(start: Node, body: Node) -> tuple[str, Node, str] | None:
    """(A, t, the step t's threads take) for a start `t`, `A + t` or `t + A`."""
    node = ts.bare(start)
    whole = ix.thread_place(node, body)
    if whole is not None:
        return "0", node, whole
    if node.type == "binary_expression" and ts.text(node.child_by_field_name("operator")) == "+":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        for t, a in ((right, left), (left, right)):
            place = ix.thread_place(ts.bare(t), body)
            if place is not None and not ts.uses_builtin(a, "threadIdx"):
                return ts.text(a), t, place
    return None


def _body_unfit(loop: Node, var: str) -> str:
    block = loop.child_by_field_name("body")
    for n in ts.walk(block):
        if n.type in ("return_statement", "goto_statement"):
            return "returns or jumps out"
        if n.type == "break_statement" and not ts.enclosing(
                n, (*ts.LOOPS, "switch_statement"), loop):
            return "breaks out"
        if n.type == "call_expression" and rd.effects(n):
            return "synchronizes or has side effects"
        target = ts.assigned(n)
        if target is not None and ts.text(target) == var:
            return f"changes {var}"
    return ""


def _arrays(subject: Subject, loop: Node, var: str, place: Node) -> list[Array] | str:
    params = {p.name for p in ts.pointer_params(subject.kernel)}
    body = ts.body(subject.kernel)
    roots = {p: p for p in params} | ts.derived_pointers(body, params)
    types = _pointer_types(subject)
    changed = {ts.text(t) for n in ts.walk(loop.child_by_field_name("body"))
               if (t := ts.assigned(n)) is not None and t.type == "identifier"}
    threads = ts.identifiers(place) | {"threadIdx"}
    by_base: dict[str, list[tuple[Node, Node | None, bool, bool]]] = {}
    for a in ts.accesses(loop, set(roots)):
        base, index = ts.address(a.node)
        if base is not None:
            by_base.setdefault(base, []).append((a.node, index, a.load, a.store))
    out = []
    for base, uses in by_base.items():
        offsets = [_offset(index, var) for _, index, _, _ in uses]
        first = offsets[0][1]
        fits = base in types and all(ok and _same(e, first) for ok, e in offsets)
        if fits and first is not None and ts.mentions(first, changed | threads):
            fits = False  # E must hold for the whole loop and every thread that shares it
        stores = any(store for *_, store in uses)
        if stores and (not fits or _elsewhere(subject, loop, roots.get(base, base), roots)):
            return (f"it stores to {base} where another thread may read it (another access "
                    "or another loop): the chunks would change which thread takes which")
        guards = {_guard(n, loop, changed | {var}) for n, *_, store in uses if store}
        if None in guards or len(guards) > 1:
            continue  # stored under a test that changes: its elements stay one by one
        if fits:
            type_text, size = types[base]
            guard = next(iter(guards)) if guards else ""
            out.append(Array(base, type_text, size, first, tuple(n for n, *_ in uses),
                             any(ld for _, _, ld, _ in uses), stores, guard or ""))
    if not out:
        return "no array it reads or writes only as p[E + j] through a pointer of known type"
    return out


def _offset(index: Node | None, var: str) -> tuple[bool, Node | None]:
    """(True, E) for an index `E + j` or `j + E`, (True, None) for `j` alone, (False, None)
    for any other index."""
    if index is None:
        return False, None
    node = ts.bare(index)
    if node.type == "identifier" and ts.text(node) == var:
        return True, None
    if node.type == "binary_expression" and ts.text(node.child_by_field_name("operator")) == "+":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        for j, e in ((right, left), (left, right)):
            if ts.text(ts.bare(j)) == var and not ts.mentions(e, {var}):
                return True, e
    return False, None


def _guard(store: Node, loop: Node, moving: set[str]) -> str | None:
    """The tests a store stands under inside the loop's body, joined ("" for none), when none
    depends on what the loop changes; None when one does, or the store stands in an else, a
    nested loop or an expression's branch."""
    tests = []
    node = store
    while node.parent is not None and node.parent != loop:
        parent = node.parent
        if parent.type in (*ts.LOOPS, "switch_statement", "conditional_expression"):
            return None
        if parent.type == "if_statement":
            if parent.child_by_field_name("alternative") is not None and ts.inside(
                    node, parent.child_by_field_name("alternative")):
                return None
            clause = parent.child_by_field_name("condition")
            if ts.mentions(clause, moving):
                return None
            tests.append(ts.text(clause.child_by_field_name("value") or
                                 clause.named_children[0]))
        node = parent
    return " && ".join(f"({t})" for t in reversed(tests))


def _same(a: Node | None, b: Node | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and
                                         ts.compact(a) == ts.compact(b))


def _elsewhere(subject: Subject, loop: Node, root: str, roots: dict[str, str]) -> bool:
    """`root` is read or written outside `loop` (through any pointer into it), or handed to a
    call."""
    body = ts.body(subject.kernel)
    names = {name for name, r in roots.items() if r == root}
    if any(not ts.inside(a.node, loop) for a in ts.accesses(body, set(roots))
           if roots.get(str(ts.address(a.node)[0])) == root):
        return True
    return any(n.type == "call_expression" and ts.mentions(
        n.child_by_field_name("arguments"), names) for n in ts.walk(body))


def _pointer_types(subject: Subject) -> dict[str, tuple[str, int]]:
    """pointer name -> (element type, bytes) for the kernel's pointer parameters and the
    local pointers declared into them, where the type's size is known and a power of two."""
    out = {}
    for p in ts.pointer_params(subject.kernel):
        t = " ".join(ts.text(p.node.child_by_field_name("type")).split())
        out[p.name] = t
    for n in ts.walk(ts.body(subject.kernel)):
        if n.type == "declaration":
            t = " ".join(ts.text(n.child_by_field_name("type")).split())
            for name, d in ts.declarators(n):
                inner = d.child_by_field_name("declarator") if d.type == "init_declarator" \
                    else d
                if inner is not None and inner.type == "pointer_declarator":
                    out[name] = t
    sized = {}
    for name, t in out.items():
        size = ts.TYPE_BYTES.get(t)
        if size is not None and not size & (size - 1) and size < MOST_BYTES:
            sized[name] = (t, size)
    return sized


# --- writing ---------------------------------------------------------------------------------

def _edits(subject: Subject, s: Shared) -> list[Edit]:
    """Where the knob holds, before the loop: when its arrays are aligned, the chunked loop
    and a scalar loop over the last iterations, else (`} else`) the loop as written."""
    data = subject.data
    lead = ts.indentation(data, s.loop.start_byte) or ""
    inner, deeper, deepest = lead + "    ", lead + "        ", lead + "            "
    body = s.loop.child_by_field_name("body")
    place, step = ts.text(s.place), ts.text(s.step)
    chunks = f"(({s.end}) - ({s.start})) / {VEC}"
    aligned = " && ".join(f"reinterpret_cast<unsigned long long>({_address(a, s.start)}) % "
                          f"alignof({_vector(a)}) == 0" for a in s.arrays)
    lines = [f"if ({aligned}) {{  // VEC iterations a thread as vectors",
             f"{inner}for ({s.type} {LOCAL}q = {place}; {LOCAL}q < {chunks}; {LOCAL}q += "
             f"{step}) {{",
             f"{deeper}const {s.type} {LOCAL}j = ({s.start}) + {LOCAL}q * {VEC};"]
    for a in s.arrays:
        load = f" = *reinterpret_cast<const {_vector(a)}*>({_address(a, f'{LOCAL}j')})" \
            if a.load else ""
        lines.append(f"{deeper}{'' if a.store else 'const '}{_vector(a)} {LOCAL}_{a.name}{load};")
    lines += [f"{deeper}#pragma unroll",
              f"{deeper}for (int {LOCAL}k = 0; {LOCAL}k < {VEC}; ++{LOCAL}k) {{",
              *([f"{deepest}const {s.type} {s.var} = {LOCAL}j + {LOCAL}k;"]
                if _reads_var(s) else []),
              deepest + _spliced(data, body, s.arrays, lead, deepest).strip(),
              f"{deeper}}}"]
    lines += [f"{deeper}{f'if ({a.guard}) ' if a.guard else ''}*reinterpret_cast<{_vector(a)}*>"
              f"({_address(a, f'{LOCAL}j')}) = {LOCAL}_{a.name};" for a in s.arrays if a.store]
    lines += [f"{inner}}}", f"{inner}for ({s.type} {s.var} = ({s.start}) + {chunks} * {VEC} + "
              f"{place}; {s.var} < ({s.end}); {s.var} += {step})  // the last iterations",
              deeper + _reindented(ts.text(body), lead, deeper).strip(),
              f"{lead}}} else"]
    line_start = s.loop.start_byte - len(lead.encode())
    return [Edit(line_start, line_start, tpl.insert(ON, tpl.filled(
        lead + "\n".join(lines) + "\n", {VEC: tpl.value(KNOB)})))]


def _reads_var(s: Shared) -> bool:
    """The body reads the loop's variable beyond the vectorized accesses."""
    swapped = [n for a in s.arrays for n in a.nodes]
    return any(n.type == "identifier" and ts.text(n) == s.var and
               not any(ts.inside(n, w) for w in swapped)
               for n in ts.walk(s.loop.child_by_field_name("body")))


def _vector(a: Array) -> str:
    return f"{LOCAL}vec<{a.type}, {VEC}>"


def _address(a: Array, j: str) -> str:
    """The address of the array's element at iteration `j`: `&p[E + (j)]`."""
    return f"&{a.name}[{ts.text(a.offset) + ' + ' if a.offset is not None else ''}({j})]"


def _spliced(data: bytes, body: Node, arrays: tuple[Array, ...], old: str, new: str) -> str:
    """The body's text, each vectorized access its register element."""
    swaps = sorted((n.start_byte, n.end_byte, f"{LOCAL}_{a.name}.v[{LOCAL}k]")
                   for a in arrays for n in a.nodes)
    out, pos = [], body.start_byte
    for start, end, register in swaps:
        out += [data[pos:start].decode(errors="surrogateescape"), register]
        pos = end
    out.append(data[pos:body.end_byte].decode(errors="surrogateescape"))
    return _reindented("".join(out), old, new)


def _reindented(text: str, old: str, new: str) -> str:
    """`text`'s later lines moved from indentation `old` to `new` (blank lines kept)."""
    lines = text.split("\n")
    moved = [new + (line[len(old):] if line.startswith(old) else line.lstrip())
             if line.strip() else line for line in lines[1:]]
    return "\n".join([lines[0], *moved])



MOVE = Move(
    NAME, ("memory_latency", "instruction_issue"),
    "deals the iterations of a loop threads share out in chunks of VEC, each chunk's arrays "
    "read and written as one vector where aligned (the last iterations one by one)", apply,
    knobs=(KNOB,),
    never="never changes the launch or the kernel's arguments, never vectorizes an access "
          "other than p[E + j], and never a loop whose stores another thread may read")
