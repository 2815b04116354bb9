"""vectorize: a one-thread-per-element kernel takes VEC contiguous elements a thread, and reads
and writes its arrays through vector accesses (16 bytes wide, two of them for 32).

Called for when memory latency is exposed (too few bytes in flight: a 4-byte load a thread
leaves DRAM idle between requests), for DRAM traffic below the roofline, and for
instruction-issue-bound streams (one vector access replaces VEC scalar ones, and the index
arithmetic is done once per VEC elements). The shape it reads is the element shape
(`pragma_ncu.syntax.element`):

    T i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;  ... y[i] = f(x[i], ...) ...       or      if (i < n) { ... }

The arrays it vectorizes are the pointer parameters the element's work touches only as `p[i]`
(never through another index, a derived pointer, `&p[i]` or a call): those are loaded as
vectors before the work (when the work reads them, or stores to them under a condition) and
stored as vectors after it; any other access (`bias[i % C]`, a gather) stays as written. Each
thread's VEC elements run the work as written, in an unrolled loop over registers.

Correct for any size and any pointer: the vector path is taken only when every one of the
thread's elements is in range (the guard must be a bound on i, checked at the first and the
last) and every vectorized pointer is aligned to the vector's width, tested at run time;
otherwise the thread runs its elements one by one through the kernel's own guard and work (the
tail, and misaligned pointers). The grid's first dimension G becomes ceil_div(G, VEC); VEC = 1
is the source and the launch as written.

It leaves alone a kernel that synchronizes, has shared memory of its own, reads the thread or
block indices outside its element index, or whose work loops (VEC elements' loops one after
another, and their accesses VEC apart across the warp), returns, breaks out or changes i.
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import dealing
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject, decode
from pragma_ncu.syntax import element as el

NAME = "vectorize"
KNOB = "PNCU_VEC"
ON = f"{KNOB} != 1"
VALUES = (1, 2, 4, 8, 16)
MOST_BYTES = 32  # a thread's elements of one array: two 16-byte accesses at the most
LOCAL = dealing.LOCAL
COMPARISONS = ("<", "<=", ">", ">=")
CONDITIONAL = ("if_statement", "conditional_expression", "switch_statement", *ts.LOOPS)
VEC = "@VEC@"  # the knob's value in the plain text below
STRUCT = (f"template <typename T, int N> struct alignas(sizeof(T) * N > 16 ? 16 : sizeof(T) * N) "
          f"{LOCAL}vec {{ T v[N]; }};  // N elements, read and written as 16-byte vectors\n")


@dataclass(frozen=True)
class Array:
    """A pointer parameter the work touches only as `p[i]`: its element type and size, its
    accesses, and whether the vector path loads and stores it."""

    name: str
    type: str
    size: int
    nodes: tuple[Node, ...]  # the `p[i]` subscripts
    load: bool
    store: bool

    @property
    def local(self) -> str:
        return f"{LOCAL}{self.name}"

    def vector(self) -> str:
        return f"{LOCAL}vec<{self.type}, {VEC}>"


def apply(subject: Subject) -> Applied | Refused:
    why = subject.batched_unfit()
    if why:
        return Refused(NAME, why)
    found = dealing.dealt_element(subject)
    if isinstance(found, str):
        return Refused(NAME, found)
    work = found.work(ts.body(subject.kernel))
    why = _work_unfit(found, work)
    if why:
        return Refused(NAME, why)
    bound = _bound(found)
    if isinstance(bound, str):
        return Refused(NAME, bound)
    arrays = _arrays(subject, found, work)
    if isinstance(arrays, str):
        return Refused(NAME, arrays)
    widest = max(a.size for a in arrays)
    values = tuple(v for v in VALUES if v * widest <= MOST_BYTES)
    grid = [g.strip() for g in subject.spec.launch.grid]
    names = ", ".join(a.name for a in arrays)
    site = (f"{names}: VEC elements a thread, read and written as vectors where all are in "
            f"range and aligned (else one by one, as written); grid {grid[0]} -> "
            f"ceil_div({grid[0]}, VEC)")
    return Applied(NAME, (Knob(KNOB, values, 1),), _edits(subject, found, bound, arrays),
                   (site,), grid=(f"ceil_div({grid[0]}, {KNOB})", *grid[1:]))


# --- reading ---------------------------------------------------------------------------------

def _work_unfit(found: el.Element, work: list[Node]) -> str:
    for n in (n for w in work for n in ts.walk(w)):
        if n.type in ts.LOOPS:
            return ("the element's work loops (a reduction or a walk): a thread's elements "
                    "would run it one after another, their other accesses VEC apart")
        if n.type in ("return_statement", "goto_statement") and not ts.enclosing(
                n, ts.FUNCTION_SCOPES, found.guard.parent):
            return "the element's work returns or jumps (a thread's other elements would not run)"
        if n.type in ("break_statement", "continue_statement") and not ts.enclosing(
                n, (*ts.LOOPS, "switch_statement"), found.guard.parent):
            return "the element's work breaks out of its block"
        target = ts.assigned(n)
        if target is not None and ts.text(target) == found.name:
            return f"the element's work changes {found.name}"
    return ""


def _condition(found: el.Element) -> Node:
    clause = found.guard.child_by_field_name("condition")
    return clause.child_by_field_name("value") or clause.named_children[0]


def _bound(found: el.Element) -> Node | str:
    """The guard's condition when it bounds i from above and below only (comparisons of i
    with what does not depend on it, joined by `||` for an early return, `&&` for a block):
    then the first and the last of a thread's elements in range means all of them are."""
    join = "||" if found.early else "&&"
    pending = [_condition(found)]
    while pending:
        n = _unwrapped(pending.pop())
        op = ts.text(n.child_by_field_name("operator")) if n.type == "binary_expression" \
            else ""
        if op == join:
            pending += [n.child_by_field_name("left"), n.child_by_field_name("right")]
            continue
        sides = [_unwrapped(n.child_by_field_name(s)) for s in ("left", "right")] \
            if op in COMPARISONS else []
        mine = [s for s in sides if s.type == "identifier" and ts.text(s) == found.name]
        if len(mine) != 1 or any(ts.mentions(s, {found.name}) for s in sides if s != mine[0]):
            return (f"the guard is not a bound on {found.name} (comparisons of it joined by "
                    f"{join}): whether a thread's elements are in range cannot be told from its "
                    "first and last")
    return _condition(found)


def _unwrapped(node: Node) -> Node:
    """`node` without the parentheses around it."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _arrays(subject: Subject, found: el.Element, work: list[Node]) -> list[Array] | str:
    body = ts.body(subject.kernel)
    out, odd = [], []
    for p in ts.pointer_params(subject.kernel):
        uses = [n for n in ts.walk(body) if n.type == "identifier" and ts.text(n) == p.name]
        nodes = [u.parent for u in uses if _element_access(u, found.name)]
        if not uses:
            continue
        if len(nodes) != len(uses) or not all(any(ts.inside(n, w) for w in work) for n in nodes):
            odd.append(p.name)
            continue
        type_text = " ".join(ts.text(p.node.child_by_field_name("type")).split())
        size = ts.TYPE_BYTES.get(type_text)
        if size is None or size & (size - 1) or size >= 16:
            odd.append(f"{p.name} ({type_text})")
            continue
        kinds = [a for a in ts.accesses(body, {p.name}) if a.node in nodes]
        stores = [a.node for a in kinds if a.store]
        conditional = any(ts.enclosing(s, CONDITIONAL, found.guard) for s in stores)
        out.append(Array(p.name, type_text, size, tuple(nodes),
                         any(a.load for a in kinds) or conditional, bool(stores)))
    if not out:
        return ("no array the element's work reads or writes only as p[i] with an element type "
                f"narrower than 16 bytes ({', '.join(odd) or 'no pointer parameter is used'})")
    return out


def _element_access(identifier: Node, index: str) -> bool:
    """`identifier[index]` read or written as a value: not its address (`&p[i]`) and not an
    array indexed again (`p[i][j]`)."""
    parent = identifier.parent
    if parent is None or parent.type != "subscript_expression" or \
            parent.child_by_field_name("argument") != identifier:
        return False
    indices = parent.child_by_field_name("indices") or parent.named_children[-1]
    inner = indices.named_children if indices.type == "subscript_argument_list" else [indices]
    if len(inner) != 1 or ts.compact(_unwrapped(inner[0])) != index:
        return False
    outer = parent.parent
    if outer is None:
        return True
    if outer.type == "subscript_expression":
        return False
    return not (outer.type == "pointer_expression" and
                ts.text(outer.child_by_field_name("operator")) == "&")


# --- writing ---------------------------------------------------------------------------------

def _edits(subject: Subject, found: el.Element, bound: Node,
           arrays: list[Array]) -> tuple[Edit, ...]:
    data = subject.data
    decl, guard = found.decl, found.guard
    indent = ts.indentation(data, decl.start_byte) or ""
    inner, deeper = indent + "    ", indent + "        "
    type_text = ts.text(decl.child_by_field_name("type"))
    init = ts.text(decl.children_by_field_name("declarator")[0].child_by_field_name("value"))
    declarator = decl.children_by_field_name("declarator")[0]
    prefix = decode(data[decl.start_byte:declarator.start_byte])  # "const int "
    cast = f"(decltype({init}))" if type_text == "auto" else f"({type_text})"
    element = f"{prefix}{found.name} = {cast}({LOCAL}first + {LOCAL}k);"
    close = ts.body(subject.kernel).children[-1]
    if found.early:
        start, end = guard.end_byte, close.start_byte
        fast = _spliced(data, start, end, arrays, 2)
    else:
        block = guard.child_by_field_name("consequence")
        start, end = block.children[0].end_byte, block.children[-1].start_byte
        fast = _spliced(data, start, end, arrays, 1)
    def in_range(at: str) -> str:
        text = ts.substituted(bound, {}, {found.name: f"{cast}({at})"})
        return f"!({text})" if found.early else f"({text})"
    aligned = " && ".join(f"reinterpret_cast<unsigned long long>({a.name}) % "
                          f"alignof({a.vector()}) == 0" for a in arrays)
    lines = [f"if ({in_range(f'{LOCAL}first')} && {in_range(f'{LOCAL}first + {VEC} - 1')}"
             f" && {aligned}) {{"]
    for a in arrays:
        load = f" = *reinterpret_cast<const {a.vector()}*>({a.name} + {LOCAL}first)" \
            if a.load else ""
        lines.append(f"{inner}{'const ' if not a.store else ''}{a.vector()} {a.local}{load};")
    lines += [f"{inner}#pragma unroll", f"{inner}for (int {LOCAL}k = 0; {LOCAL}k < {VEC}; "
              f"++{LOCAL}k) {{"]
    if _reads_index(found, arrays, start, end):
        lines.append(f"{deeper}{element}")
    tail = [f"{inner}}}"]
    tail += [f"{inner}*reinterpret_cast<{a.vector()}*>({a.name} + {LOCAL}first) = {a.local};"
             for a in arrays if a.store]
    tail += [f"{indent}}} else {{", f"{inner}for (int {LOCAL}k = 0; {LOCAL}k < {VEC}; "
             f"++{LOCAL}k) {{", f"{deeper}{element}", deeper]
    opening = "\n".join(lines) + fast.rstrip() + "\n" + "\n".join(tail)
    first = f"const long long {LOCAL}first = (long long)({init}) * {VEC};"
    values = {VEC: tpl.value(KNOB)}
    edits = [Edit(decl.start_byte, decl.end_byte,
                  tpl.when(ON, tpl.filled(first, values), ts.text(decl))),
             Edit(guard.start_byte, guard.start_byte, tpl.insert(ON, tpl.filled(opening,
                                                                                values))),
             Edit(top := ts.definition_start(subject.kernel), top,
                  tpl.insert(ON, tpl.literal(STRUCT)))]
    if found.early:
        edits += tpl.indented(data, guard.end_byte, close.start_byte, ON, depth=2)
        edits.append(Edit(close.start_byte, close.start_byte,
                          tpl.insert(ON, tpl.literal(f"{inner}}}\n{indent}}}\n"))))
    else:
        edits += tpl.indented(data, guard.start_byte, guard.end_byte, ON, depth=2)
        edits.append(Edit(guard.end_byte, guard.end_byte,
                          tpl.insert(ON, tpl.literal(f"\n{inner}}}\n{indent}}}"))))
    return tuple(edits)


def _reads_index(found: el.Element, arrays: list[Array], start: int, end: int) -> bool:
    """The work in [start, end) reads i beyond the vectorized `p[i]`."""
    swapped = [n for a in arrays for n in a.nodes]
    return any(n.type == "identifier" and ts.text(n) == found.name and start <= n.start_byte < end
               and not any(ts.inside(n, s) for s in swapped) for n in ts.walk(found.guard.parent))


def _spliced(data: bytes, start: int, end: int, arrays: list[Array], depth: int) -> str:
    """The work's text in [start, end), each vectorized `p[i]` its register element, every
    line `depth` levels deeper."""
    swaps = sorted((n.start_byte, n.end_byte, f"{a.local}.v[{LOCAL}k]")
                   for a in arrays for n in a.nodes if start <= n.start_byte < end)
    out, pos = [], start
    for s, e, new in swaps:
        out += [decode(data[pos:s]), new]
        pos = e
    out.append(decode(data[pos:end]))
    lines = "".join(out).split("\n")
    return "\n".join([lines[0], *((("    " * depth) + line) if line.strip() else line
                                  for line in lines[1:])])



MOVE = Move(
    NAME, ("memory_latency", "instruction_issue"),
    "reads and writes VEC contiguous elements a thread through 16-byte vector accesses (one "
    "by one where the tail or a misaligned pointer needs it), so more bytes are in flight per "
    "instruction", apply,
    knobs=(KNOB,),
    never="never changes the block size or the kernel's arguments, never vectorizes an "
          "access other than p[i], and never takes the vector path unless all of a thread's "
          "elements are in range and its pointers aligned")
