"""smem_tile: a kernel that reads one array along rows and writes another along columns (a
transpose, a permute of a 2-D slice) stages the read through a TILE x TILE shared-memory tile,
so that both its global reads and its global writes are coalesced.

Called for by uncoalesced accesses. One thread per element (x, y) of a 2-D launch, adjacent
threads of a warp at adjacent x: `out[x * M + y] = in[y * N + x]` reads `in` with adjacent
threads at adjacent addresses, but writes `out` M elements apart, a sector for every thread
(or the reverse). The shape it reads (`pragma_ncu.syntax.element.plane`):

    T x = blockIdx.x * blockDim.x + threadIdx.x;
    T y = blockIdx.y * blockDim.y + threadIdx.y;
    ... declarations ...
    if (x >= N || y >= M) return;  ... the work ...      or      if (x < N && y < M) { ... }

The work's stores that depend on both indices are unit-stride along the same one (`out[x * M +
y]`: along y); its loads that depend on both are unit-stride along that one (left as written)
or along the other (`in[y * N + x]`, `*(in + y * N + x)`, `__ldg(&in[y * N + x])`: those are
*staged*, a tile each, up to four); loads of one index only (`bias[x]`), scalars and other
inputs are read as written. Addresses are read through the locals the kernel never changes
(`const int i_in = y * N + x;`, `const float* row = in + y * N;`). A staged load must be read
for every element in range (once at least, not under a condition of the work nor after a
return in it), of an array the kernel does not store to, with values it does not change.

The rewrite (knob PNCU_TILE: 0 = the source and the launch as written, 16, 32): the block is
TILE x TILE threads and the grid ceil_div over the same extents. First each thread loads its
element of each tile with adjacent threads at adjacent addresses of the staged array, under the
guard as a predicate (the declarations the guard and the load need repeated in a block of their
own); a barrier that every thread reaches; then the kernel as written, its indices taken from
the transposed thread (thread (tx, ty) takes the element whose write index moves with tx), each
staged load read from the tile. The tile is indexed [y % TILE][x % TILE]; one of the two phases
reads it by column, which `smem_pad` pads in a later round (bank conflicts).

It refuses a 1-D launch, a grid not written as ceil_div(extent, block) in x and y, a block with
a third dimension, loops, barriers or shared memory of the kernel's own, thread or block indices
read outside the two index declarations (blockIdx.z, a batch, is kept), returns before the
guard, stores along both indices, an access across both indices that is unit-stride along
neither, and a load to stage that is not read for every element as above.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import dealing
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject
from pragma_ncu.infra.errors import ExpressionError
from pragma_ncu.spec import expr
from pragma_ncu.syntax import element as el
from pragma_ncu.syntax import reductions as rd

NAME = "smem_tile"
KNOB = "PNCU_TILE"
ON = KNOB  # any tile but 0
VALUES = (0, 16, 32)
LOCAL = dealing.LOCAL
TILE = "@TILE@"  # the knob's value in the plain text below
MOST_TILES = 4
SHARED_BYTES = 48 * 1024  # the static shared memory a block may declare
UNKNOWN_BYTES = 16  # an element type whose size is not known here: the widest assumed
PAD = 2  # the most smem_pad adds to a tile's rows
KEPT = frozenset({"blockIdx.z", "gridDim.z"})  # a batch index: the blocks keep it
LANE, ROW = "lane", "row"  # along x (adjacent threads of a warp), along y
CONDITIONAL = ("if_statement", "conditional_expression", "switch_statement", *ts.LOOPS)
LOAD_CALLS = re.compile(r"__ld(g|ca|cg|cs|lu|cv)$")  # a load through its address
SWAP = {"threadIdx.x": "threadIdx.y", "threadIdx.y": "threadIdx.x"}


@dataclass(frozen=True)
class Staged:
    """A load the tile stages: the load as written, the tile's name and element type, and the
    nodes that read it (the same text wherever it stands)."""

    text: str
    tile: str
    type: str
    size: int | None
    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class Layout:
    """What the rewrite needs: the plane, the index the stores walk, the staged loads, and the
    declarations the load phase repeats (before the guard's predicate, and under it)."""

    plane: el.Plane
    write: str  # LANE or ROW: the index the stores are unit-stride along
    stores: tuple[str, ...]
    staged: tuple[Staged, ...]
    before: tuple[Node, ...]
    under: tuple[Node, ...]


@dataclass(frozen=True)
class Body:
    """What the readers share: the kernel's body, the locals it never changes (name -> value),
    the names it changes, its accesses through pointer parameters, the arrays it stores to."""

    node: Node
    values: dict[str, Node]
    changed: set[str]
    accesses: tuple[ts.Access, ...]
    stored: frozenset[str]

    @staticmethod
    def of(kernel: Node) -> Body:
        node = ts.body(kernel)
        accesses = tuple(ts.accesses(node, {p.name for p in ts.pointer_params(kernel)}))
        return Body(node, ts.fixed_values(node), ts.changed_names(node), accesses,
                    frozenset(a.root for a in accesses if a.store))

    def inside(self, nodes: list[Node]) -> list[ts.Access]:
        return [a for a in self.accesses if any(ts.inside(a.node, n) for n in nodes)]


@dataclass(frozen=True)
class Launch:
    grid: tuple[str, ...]
    block: tuple[str, ...]
    extents: tuple[str, str]
    fixed: tuple[str, ...]  # declared parameters the block was written with


def apply(subject: Subject) -> Applied | Refused:
    launch = _launch(subject)
    if isinstance(launch, str):
        return Refused(NAME, launch)
    found = el.plane(subject.kernel)
    if isinstance(found, str):
        return Refused(NAME, found)
    layout = dealing.threads_unfit(subject, (found.lane.decl, found.row.decl), found.guards,
                                   KEPT) or _kernel_unfit(subject, found) or \
        _layout(subject, found)
    if isinstance(layout, str):
        return Refused(NAME, layout)
    values = tuple(v for v in VALUES if v == 0 or _fits(v, layout.staged))
    if len(values) < 2:
        return Refused(NAME, f"{len(layout.staged)} tiles of {min(VALUES[1:])} x "
                             f"{min(VALUES[1:])} elements do not fit in {SHARED_BYTES} bytes "
                             "of shared memory")
    return Applied(NAME, (Knob(KNOB, values, 0),), _edits(subject, layout),
                   (_site(layout, launch),), grid=launch.grid, block=launch.block,
                   fixed=launch.fixed)


def _fits(tile: int, staged: tuple[Staged, ...]) -> bool:
    return sum(s.size or UNKNOWN_BYTES for s in staged) * tile * (tile + PAD) <= SHARED_BYTES


def _site(layout: Layout, launch: Launch) -> str:
    plane = layout.plane
    write = plane.row.name if layout.write == ROW else plane.lane.name
    read = plane.lane.name if layout.write == ROW else plane.row.name
    loads = ", ".join(s.text for s in layout.staged)
    return (f"{loads} (along {read}) staged through TILE x TILE shared tiles for "
            f"{', '.join(layout.stores)} (along {write}): block -> (TILE, TILE), grid -> "
            f"ceil_div({launch.extents[0]}, TILE), ceil_div({launch.extents[1]}, TILE)")


# --- the launch ------------------------------------------------------------------------------

def _launch(subject: Subject) -> Launch | str:
    """The launch at every tile: the block TILE x TILE, the grid ceil_div over the extents the
    spec's grid covers, both as written at TILE = 0."""
    grid = [g.strip() for g in subject.spec.launch.grid]
    block = [b.strip() for b in subject.spec.launch.block]
    if subject.one_dimensional or len(grid) < 2 or len(block) < 2:
        part = "block" if len(block) < 2 or block[1] == "1" else "grid"
        return (f"the {part} is one-dimensional: the tile stages a 2-D launch's thread per "
                "element (x, y)")
    if any(b != "1" for b in block[2:]):
        return "the block has a third dimension (the tile is a block of TILE x TILE threads)"
    why = dealing.cooperates(subject)  # tiled already, say: before the grid's form
    if why:
        return why
    extents, tiled = [], []
    for d, axis in enumerate("xy"):
        extent = _ceil_div(grid[d], block[d])
        if extent is None:
            return (f"the grid's {axis} dimension ({grid[d]}) is not written as "
                    f"ceil_div(extent, {block[d]}): the extent the blocks cover is unknown")
        extents.append(extent)
        tiled.append(f"{KNOB} if {KNOB} else {block[d]}")
    names = set().union(*(expr.names(b) for b in block[:2]))
    used = sorted(names & set().union(*(ts.identifiers(ts.body(f)) for f in subject.reached())))
    if used:
        return (f"the kernel's code names {', '.join(used)}, which the block is written with: "
                "it would not follow the tile's block")
    fixed = tuple(sorted(n for n in names if any(p.name == n for p in subject.spec.params)))
    return Launch((*[f"ceil_div({e}, {t})" for e, t in zip(extents, tiled, strict=True)],
                   *grid[2:]), (*tiled, *block[2:]), (extents[0], extents[1]), fixed)


def _ceil_div(grid: str, block: str) -> str | None:
    """The extent of `ceil_div(extent, block)`, None for a grid written otherwise."""
    try:
        call, size = expr.parse(grid).body, expr.parse(block).body
    except ExpressionError:
        return None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and
            call.func.id == "ceil_div" and len(call.args) == 2) or \
            ast.dump(call.args[1]) != ast.dump(size):
        return None
    return ast.get_source_segment(grid, call.args[0])


# --- reading ---------------------------------------------------------------------------------

def _kernel_unfit(subject: Subject, found: el.Plane) -> str:
    body = ts.body(subject.kernel)
    for n in ts.walk(body):
        if n.type in ts.LOOPS:
            return (f"the kernel loops (line {ts.first_line(n)}): a tile stages one element a "
                    "thread")
        if n.type == "return_statement" and n.start_byte < found.guards[0].start_byte:
            return (f"the kernel returns before its guard (line {ts.first_line(n)}): every "
                    "thread must reach the tile's barrier")
    values = ts.fixed_values(body)
    changed = [i.name for i in (found.lane, found.row) if i.name not in values]
    if changed:
        return f"{', '.join(changed)} changes after its declaration"
    return ""


def _layout(subject: Subject, found: el.Plane) -> Layout | str:
    body = Body.of(subject.kernel)
    work = found.work(body.node)
    stores: list[tuple[Node, str]] = []
    loads: list[tuple[ts.Access, set[str]]] = []
    for a in body.accesses:
        along = {k: ts.depends_on(a.node, {i.name}, body.values)
                 for k, i in ((LANE, found.lane), (ROW, found.row))}
        if not any(along.values()):
            continue
        if not any(ts.inside(a.node, w) for w in work):
            return (f"{ts.text(a.node)} (line {ts.first_line(a.node)}) is accessed in or "
                    "before the guard: only the guarded work may touch the element's memory")
        if not all(along.values()):
            continue  # one index only (a row or a column vector): read as written
        units = {k for k, i in ((LANE, found.lane), (ROW, found.row))
                 if ts.address_stride(a.node, {i.name}, body.values) == "unit"}
        if not units:
            return (f"{ts.text(a.node)} (line {ts.first_line(a.node)}) is unit-stride neither "
                    f"in {found.lane.name} nor in {found.row.name}: no tile makes it coalesced")
        if a.store:
            stores.append((a.node, LANE if LANE in units else ROW))
        else:
            loads.append((a, units))
    write = _write(found, stores)
    if write not in (LANE, ROW):
        return write
    across = [a for a, units in loads if write not in units]
    if not across:
        axis = found.row.name if write == ROW else found.lane.name
        return (f"no load is transposed against the stores: every access across both indices "
                f"is unit-stride in {axis}, as the stores are (nothing to stage)")
    written = list(dict.fromkeys(ts.text(n) for n, _ in stores))
    return _staged(subject, found, body, write, written, across)


def _write(found: el.Plane, stores: list[tuple[Node, str]]) -> str:
    """The index the stores walk, or why there is none."""
    if not stores:
        return (f"no store of the work depends on both {found.lane.name} and {found.row.name}: "
                "nothing is written across the plane")
    kinds = {k for _, k in stores}
    if len(kinds) > 1:
        along = {k: next(ts.text(n) for n, kk in stores if kk == k) for k in kinds}
        return (f"{along[LANE]} is written along {found.lane.name} and {along[ROW]} along "
                f"{found.row.name}: no one mapping of threads writes both coalesced")
    return kinds.pop()


def _staged(subject: Subject, found: el.Plane, body: Body, write: str, stores: list[str],
            across: list[ts.Access]) -> Layout | str:
    """The loads across the grain, each with its tile, and what the load phase repeats."""
    work = found.work(body.node)
    nodes: dict[str, list[Node]] = {}
    roots: dict[str, str] = {}  # the parameter each load reads through
    for a in across:
        load = _load(a.node)
        if isinstance(load, str):
            return load
        nodes.setdefault(ts.compact(load), []).append(load)
        roots[ts.compact(load)] = a.root
    for same in nodes.values():  # one read for every element (the same text, the same value)
        reasons = [_unconditional(n, work) for n in same]
        if all(reasons):
            return reasons[0]
    if len(nodes) > MOST_TILES:
        return (f"{len(nodes)} loads to stage (at most {MOST_TILES} tiles): "
                f"{', '.join(ts.text(v[0]) for v in nodes.values())}")
    staged = []
    for k, same in enumerate(nodes.values()):
        base = ts.address(_access(same[0]))[0] or roots[ts.compact(same[0])]
        kind = _element_type(subject, base)
        if kind is None:
            return (f"the element type of {base} is not written where it is declared (auto?): "
                    "the tile's type is unknown")
        tile = f"{LOCAL}tile" if len(nodes) == 1 else f"{LOCAL}tile{k}"
        staged.append(Staged(ts.text(same[0]), tile, kind, ts.TYPE_BYTES.get(kind),
                             tuple(same)))
    copies = _copies(found, body, [n for s in staged for n in s.nodes])
    if isinstance(copies, str):
        return copies
    before, under = copies
    return Layout(found, write, tuple(stores), tuple(staged), before, under)


def _load(node: Node) -> Node | str:
    """The expression that loads through `node`: itself, or a load call through its address
    (`__ldg(&in[k])`)."""
    parent = node.parent
    if parent is None or parent.type != "pointer_expression" or \
            ts.text(parent.child_by_field_name("operator")) != "&":
        return node
    call = parent.parent.parent if parent.parent is not None else None
    if call is not None and \
            call.type == "call_expression" and len(parent.parent.named_children) == 1 and \
            LOAD_CALLS.match(ts.text(call.child_by_field_name("function"))):
        return call
    return f"the kernel takes the address of {ts.text(node)} (line {ts.first_line(node)})"


def _access(load: Node) -> Node:
    """The subscript or dereference a staged load reads through."""
    if load.type != "call_expression":
        return load
    return load.child_by_field_name("arguments").named_children[0].child_by_field_name(
        "argument")


def _unconditional(load: Node, work: list[Node]) -> str:
    """Why the load cannot be made for every element in range ('' when it can): it stands
    under a condition of the work, or after a return."""
    top = next(w for w in work if ts.inside(load, w))
    node = load
    while node is not None and node != top.parent:
        parent = node.parent
        logical = parent is not None and parent.type == "binary_expression" and \
            ts.text(parent.child_by_field_name("operator")) in ("&&", "||") and \
            parent.child_by_field_name("right") == node
        if node.type in CONDITIONAL and node != load or logical:
            return (f"{ts.text(load)} (line {ts.first_line(load)}) is read under a condition: "
                    "loading it for every element could read what the source never reads")
        node = parent
    jump = next((n for w in work for n in ts.walk(w) if n.type in ("return_statement",
                                                                   "goto_statement")
                 and n.start_byte < load.start_byte), None)
    if jump is not None:
        return (f"the work may return (line {ts.first_line(jump)}) before it reads "
                f"{ts.text(load)}")
    if rd.effects(load):
        return f"{ts.text(load)} (line {ts.first_line(load)}) calls what has effects"
    return ""


def _element_type(subject: Subject, base: str) -> str | None:
    """The element type a pointer parameter or a local pointer is declared with."""
    for p in ts.pointer_params(subject.kernel):
        if p.name == base:
            return " ".join(ts.text(p.node.child_by_field_name("type")).split())
    for n in ts.walk(ts.body(subject.kernel)):
        if n.type == "declaration" and base in dict(ts.declarators(n)):
            kind = " ".join(ts.text(n.child_by_field_name("type")).split())
            return None if kind == "auto" else kind
    return None


def _copies(found: el.Plane, body: Body,
            loads: list[Node]) -> tuple[tuple[Node, ...], tuple[Node, ...]] | str:
    """The declarations the load phase repeats, in source order: those between the first index
    and the guard (before the guard's predicate), and those of the work (under it), that the
    guard and the staged loads need. What they read must hold the same value there: nothing
    the kernel changes or stores to."""
    start = min(found.lane.decl.start_byte, found.row.decl.start_byte)
    declares = {name: s for s in (*found.prologue, *found.work(body.node))
                if s.type == "declaration" for name, _ in ts.declarators(s)}
    local = {name for n in ts.walk(body.node) if n.type == "declaration"
             for name, _ in ts.declarators(n)} - set(_before(body.node, start))
    pending = [*loads, *_tests(found)]
    needed: list[Node] = []
    while pending:
        for name in sorted(ts.identifiers(pending.pop())):
            decl = declares.get(name)
            if decl is None and (name in local or name in body.changed):
                return (f"{name}, which the guard or a staged load reads, is not a value the "
                        "load phase can repeat (declared in an inner block, or changed)")
            if decl is None or decl in needed:
                continue
            why = _pure(decl, name, body.values)
            if why:
                return why
            needed.append(decl)
            pending.append(decl)
    read = next((a for a in body.inside([*loads, *needed]) if a.root in body.stored), None)
    if read is not None:
        return (f"the kernel stores to {read.root}, which {ts.text(read.node)} (line "
                f"{ts.first_line(read.node)}) reads: the load phase would read it before")
    needed.sort(key=lambda s: s.start_byte)
    guard = found.guards[0].start_byte
    return (tuple(s for s in needed if s.start_byte < guard),
            tuple(s for s in needed if s.start_byte > guard))


def _tests(found: el.Plane) -> list[Node]:
    return [g.child_by_field_name("condition") for g in found.guards]


def _before(body: Node, start: int) -> list[str]:
    """The names declared by the body's statements before `start` (in scope where the load
    phase goes)."""
    return [name for s in ts.statements(body) if s.end_byte <= start and s.type == "declaration"
            for name, _ in ts.declarators(s)]


def _pure(decl: Node, name: str, values: dict[str, Node]) -> str:
    """Why the load phase cannot repeat a declaration ('' when it can)."""
    line = ts.first_line(decl)
    if name not in values:
        return f"{name} (line {line}) changes after its declaration"
    if rd.effects(decl) or any(ts.assigned(n) is not None for n in ts.walk(decl)):
        return (f"the declaration of {name} (line {line}) has effects: the load phase cannot "
                "repeat it")
    return ""


# --- writing ---------------------------------------------------------------------------------

def _edits(subject: Subject, layout: Layout) -> tuple[Edit, ...]:
    data = subject.data
    plane = layout.plane
    first = min((plane.lane.decl, plane.row.decl), key=lambda n: n.start_byte)
    indent = ts.indentation(data, first.start_byte) or ""
    line = first.start_byte - len(indent.encode())
    values = {TILE: tpl.value(KNOB)}
    edits = [Edit(line, line, tpl.insert(ON, tpl.filled(_load_phase(layout, indent), values)))]
    if layout.write == ROW:  # the write phase is the transposed one: adjacent threads, adjacent y
        edits += [Edit(n.start_byte, n.end_byte, tpl.when(ON, SWAP[ts.text(n)], ts.text(n)))
                  for n in _thread_fields(plane)]
    read = _tile_at(layout.write == ROW)
    for s in layout.staged:
        edits += [Edit(n.start_byte, n.end_byte, tpl.when(ON, tpl.literal(s.tile + read),
                                                          ts.text(n))) for n in s.nodes]
    return tuple(edits)


def _thread_fields(plane: el.Plane) -> list[Node]:
    return [n for i in (plane.lane, plane.row) for n in ts.walk(i.value)
            if n.type == "field_expression" and ts.text(n) in SWAP]


def _tile_at(swapped: bool) -> str:
    """The tile's element of a thread (tile[y % TILE][x % TILE]): where x takes threadIdx.x,
    or, in the transposed phase, threadIdx.y."""
    return "[threadIdx.x][threadIdx.y]" if swapped else "[threadIdx.y][threadIdx.x]"


def _load_phase(layout: Layout, indent: str) -> str:
    """The tiles, each thread loading its element of them (guarded), and the barrier (plain
    text; TILE stands for the knob)."""
    plane = layout.plane
    swapped = layout.write == LANE  # the load phase is the transposed one
    inner, deeper = indent + "    ", indent + "        "
    fields = {n.id: SWAP[ts.text(n)] for n in _thread_fields(plane)} if swapped else {}
    along = plane.row.name if swapped else plane.lane.name
    lines = [f"{indent}__shared__ {s.type} {s.tile}[{TILE}][{TILE}];  // {s.text} at "
             f"[{plane.row.name} % {TILE}][{plane.lane.name} % {TILE}]" for s in layout.staged]
    lines.append(f"{indent}{{  // loaded with adjacent threads at adjacent {along} (coalesced)")
    lines += [inner + _copied(s, fields, inner) for s in layout.before]
    lines.append(f"{inner}if ({plane.in_range()}) {{")
    lines += [deeper + _copied(s, {}, deeper) for s in layout.under]
    at = _tile_at(swapped)
    lines += [f"{deeper}{s.tile}{at} = {s.text};" for s in layout.staged]
    written = plane.lane.name if swapped else plane.row.name
    lines += [f"{inner}}}", f"{indent}}}",
              f"{indent}__syncthreads();  // every thread reaches it: the tiles are complete",
              f"{indent}// the kernel as written, adjacent threads at adjacent {written}; the "
              "staged loads from the tiles", ""]
    return "\n".join(lines)


def _copied(statement: Node, replace: dict[int, str], indent: str) -> str:
    """A statement's text (the nodes in `replace` rewritten), its later lines re-indented."""
    lines = ts.substituted(statement, replace).split("\n")
    return "\n".join([lines[0], *(indent + line.lstrip() for line in lines[1:])])


MOVE = Move(
    NAME, ("uncoalesced_access",),
    "stages a load that a 2-D kernel reads across the grain of its stores through a TILE x "
    "TILE shared tile: each thread loads its element along one index and writes the "
    "transposed one along the other, so that reads and writes are both coalesced", apply,
    knobs=(KNOB,),
    never="never changes the kernel's arguments or what it computes for an element; never "
          "stages a load under a condition, after a return, or of an array the kernel stores "
          "to; every thread reaches the barrier")
