"""coalesce: swap the thread-to-index mapping where adjacent threads touch addresses far apart.

The lanes of a warp are threads with adjacent `threadIdx.x` (adjacent flat indices, on a 1-D
launch). When that index drives the slow dimension of the arrays, each warp access touches 32
addresses a row apart (32 sectors for 128 useful bytes), where the other coordinate would have
touched one contiguous run. Called for when global accesses fetch sectors for bytes they do
not use: uncoalesced accesses, and the L1, L2 and latency findings whose time is those wasted
sectors. Two forms, read on the syntax tree:

- a 2-D launch whose x index drives the slow dimension (a naive SGEMM, `row` from
  `threadIdx.x`, `col` from `threadIdx.y`): PNCU_COALESCE = 1 swaps x and y in every read of
  `threadIdx`, `blockIdx`, `blockDim` and `gridDim` (the index computations) and swaps the
  launch's grid and block dimensions 0 and 1. The thread that computes an element then is the
  one at the swapped place of the swapped launch: every element is computed as before, by one
  thread, with the guard and the work as written; only which threads share a warp changes. So
  the kernel must not let its threads meet (shared memory, barriers, warp-level calls), and it
  must read the built-in indices only in its index computations (declarations outside loops
  computed from them and from scalars alone), which is where the swap reads which index each
  access follows.
- a 1-D launch whose flat index is split the wrong way round (`r = i % R; c = i / R` over a
  row-major `[R, C]`): PNCU_COALESCE = 1 makes it `r = i / C; c = i % C`. Both are one-to-one
  from [0, R * C) onto the R x C pairs, so every pair is computed as before when the guard
  bounds both coordinates (`r < R && c < C`, or `i < R * C`, which also gives C) and nothing
  else reads i; the launch is unchanged.

Each global access (through a pointer parameter, or a pointer derived from one) is read for how
its address moves as each coordinate steps by one (`syntax.address_strides`), an access in a
loop counting LOOP_WEIGHT times a level. The lanes of an access lie apart when the address
moves by a multiple (or some other way) with the coordinate that varies across the warp. The
swap is proposed when it leaves at most half of the weight whose lanes lie apart as written
(the accesses unit-stride in the other coordinate become contiguous, those that followed the
warp's coordinate become broadcasts), and never when an access is already unit-stride in the
warp's coordinate and strided by the other (the swap would spread it: a transposed pair is
staged through shared memory, not swapped). PNCU_COALESCE = 0 is the source and the launch as
written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject
from pragma_ncu.infra.errors import PragmaError
from pragma_ncu.syntax import element as el

NAME = "coalesce"
KNOB = "PNCU_COALESCE"
LOOP_WEIGHT = 16  # an access in a loop counts this many times a level of loops
WARP = 32
GRID_YZ_MOST = 65535  # the most blocks a grid's second (or third) dimension may have
X, Y = "threadIdx.x", "threadIdx.y"
APART = ("scaled", "other")  # how an address moves when adjacent lanes lie apart
# cooperative groups' calls that synchronize or exchange between threads, or ask which they are
COOPERATIVE = ("sync", "this_grid", "shfl", "shfl_down", "shfl_up", "shfl_xor", "ballot", "any",
               "all", "thread_rank", "meta_group_rank")
_SIMPLE = re.compile(r"\w+(\([^()]*\))?")  # a launch expression written without parentheses


@dataclass(frozen=True)
class Weighed:
    """An access with how its address moves along the warp's coordinate as written (`now`)
    and along the other one (`swapped`), and its weight."""

    node: Node
    now: str | None
    swapped: str | None
    weight: int

    def words(self) -> str:
        return f"{ts.text(self.node)} (line {ts.first_line(self.node)})"


def apply(subject: Subject) -> Applied | Refused:
    why = _unfit(subject)
    if why:
        return Refused(NAME, why)
    blocks = _blocks(subject)
    if isinstance(blocks, str):
        return Refused(NAME, blocks)
    if any(y > 1 for _, y, _ in blocks):
        return _two_dimensional(subject, blocks)
    if _reads_y(subject):
        bx = blocks[0][0]
        return Refused(NAME, f"the launch's blocks have one thread in y ({bx} x 1): there is no "
                             "y to swap x with (launch a 2-D block, such as 16 x 16)")
    return _flat(subject)


# --- what both forms need ----------------------------------------------------------------------

def _unfit(subject: Subject) -> str:
    """Why the kernel's threads cannot be given other elements ('' when they can): they meet in
    shared memory, at barriers or in warp-level calls, or read a built-in index whole."""
    for fn in subject.reached():
        for n in ts.walk(ts.body(fn)):
            if ts.is_shared(n):
                return (f"the kernel has shared memory (line {ts.first_line(n)}): its threads "
                        "share data by their place in the block, which the swap changes")
            if n.type == "call_expression" and _syncing(n):
                return (f"the kernel synchronizes or exchanges between threads (line "
                        f"{ts.first_line(n)}): barriers, shuffles and votes depend on which "
                        "threads share a block or a warp, which the swap changes")
            if "asm" in n.type:
                return (f"the kernel has inline assembly (line {ts.first_line(n)}): it may read "
                        "the lane or the warp a thread is, which the swap changes")
        whole = ts.builtins_whole(ts.body(fn))
        if whole:
            return (f"the kernel reads {ts.text(whole[0])} whole (line "
                    f"{ts.first_line(whole[0])}): the swap reads and swaps its fields only")
    return ""


def _syncing(call: Node) -> bool:
    """A call that synchronizes or exchanges between threads: CUDA's own (`__syncthreads`,
    `__shfl_*`, ...) or a cooperative group's (`cg::this_thread_block()`, `block.sync()`)."""
    name = re.split(r"::|\.|->", ts.compact(call.child_by_field_name("function")))[-1]
    return name.startswith(ts.SYNCING) or name in COOPERATIVE


def _blocks(subject: Subject) -> list[tuple[int, int, int]] | str:
    spec = subject.spec
    try:
        return [spec.resolve(s, subject.point).launch.block for s in spec.shapes]
    except PragmaError as exc:
        return f"the launch's block could not be computed: {exc}"


def _reads_y(subject: Subject) -> bool:
    """The kernel reads threadIdx.y (it was written for a 2-D block)."""
    return any(ts.compact(r) == Y for fn in subject.reached()
               for r in ts.builtin_reads(ts.body(fn)))


def _weighed(body: Node, params: set[str], fast: str, slow: str) -> list[Weighed]:
    now = ts.address_strides(body, params, {fast})
    swapped = ts.address_strides(body, params, {slow})
    return [Weighed(a.node, k, s, LOOP_WEIGHT ** len(ts.enclosing(a.node, ts.LOOPS, body)))
            for (a, k), (_, s) in zip(now, swapped, strict=True)]


def _verdict(accesses: Sequence[Weighed], fast: str, slow: str) -> str:
    """Why swapping which coordinate varies across the warp would not bring the lanes of the
    kernel's accesses together ('' when it would)."""
    spread = [a for a in accesses if a.now == "unit" and a.swapped in APART]
    if spread:
        return (f"{spread[0].words()} is already unit-stride in {fast}: adjacent threads touch "
                f"adjacent addresses there, and the swap would spread them {slow}'s stride "
                "apart (a transposed pair is staged through shared memory, not swapped)")
    apart = sum(a.weight for a in accesses if a.now in APART)
    if not apart:
        return (f"no global access moves apart with {fast} (none is strided by it): adjacent "
                "threads do not touch addresses far apart")
    left = sum(a.weight for a in accesses if a.swapped in APART)
    if 2 * left > apart:
        worst = next(a for a in accesses if a.swapped in APART)
        return (f"the swap would leave the lanes of {worst.words()} apart: of the accesses "
                f"whose lanes lie apart as written (weight {apart}, an access in a loop counting "
                f"{LOOP_WEIGHT} times a level), it would bring at most half together (weight "
                f"{left} would lie apart along {slow})")
    return ""


def _together(accesses: Sequence[Weighed]) -> str:
    """What the swap does to the accesses, in words: those it makes contiguous across a warp
    (the others whose lanes lay apart become one address a warp)."""
    names = [ts.text(a.node) for a in accesses if a.swapped == "unit" and a.now != "unit"]
    if not names:
        return "the strided accesses shared by a warp's lanes instead"
    return f"{', '.join(dict.fromkeys(names))} contiguous across a warp"


# --- a 2-D launch: x and y swapped -------------------------------------------------------------

def _two_dimensional(subject: Subject, blocks: list[tuple[int, int, int]]) -> Applied | Refused:
    kernel = subject.kernel
    body = ts.body(kernel)
    for fn in subject.reached()[1:]:
        reads = ts.builtin_reads(ts.body(fn))
        if reads:
            return Refused(NAME, f"{ts.function_name(fn)} reads {ts.text(reads[0])} (line "
                                 f"{ts.first_line(reads[0])}): the swap reads the thread's "
                                 "indices in the kernel itself only")
    swapped = [r for r in ts.builtin_reads(body)
               if ts.text(r.child_by_field_name("field")) in ("x", "y")]
    values = ts.fixed_values(body)
    declarations = []
    for r in swapped:
        decl = _index_computation(r, body, values)
        if isinstance(decl, str):
            return Refused(NAME, decl)
        if decl not in declarations:
            declarations.append(decl)
    if not any(ts.compact(r) == Y for r in swapped):
        return Refused(NAME, "the kernel never reads threadIdx.y: no coordinate of its y "
                             "dimension to swap x with")
    why = _warp_shape(blocks) or _grid_fits(subject)
    if why:
        return Refused(NAME, why)
    params = {p.name for p in ts.pointer_params(kernel)}
    accesses = _weighed(body, params, X, Y)
    why = _verdict(accesses, X, Y)
    if why:
        return Refused(NAME, why)
    launch = subject.spec.launch
    grid, block = _swapped(launch.grid), _swapped(launch.block)
    lines = sorted({ts.first_line(d) for d in declarations})
    site = (f"x and y swapped in the index computations at line"
            f"{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}: "
            f"{_together(accesses)}; grid "
            f"({', '.join(_two(launch.grid))}) and block ({', '.join(_two(launch.block))}) "
            "swapped with them")
    return Applied(NAME, (Knob(KNOB, (0, 1), 0),), _swap_edits(declarations, swapped), (site,),
                   grid=grid, block=block, swaps_block=True)


def _index_computation(read: Node, body: Node, values: dict[str, Node]) -> Node | str:
    """The declaration whose value holds `read` when it is an index computation (outside
    loops, computed without loads or calls, its names never assigned again), else why not."""
    where = f"{ts.text(read)} (line {ts.first_line(read)})"
    declarator = read
    while declarator.parent is not None and declarator.type != "init_declarator" and \
            declarator != body:
        declarator = declarator.parent
    decl = declarator.parent
    value = declarator.child_by_field_name("value") if declarator.type == "init_declarator" \
        else None
    if decl is None or decl.type != "declaration" or value is None or not ts.inside(read, value):
        return (f"the kernel reads {where} outside a declaration of the thread's coordinates: "
                "declare them first (`int row = blockIdx.y * blockDim.y + threadIdx.y;`), so "
                "that the swap can tell which accesses each one drives")
    if ts.enclosing(decl, ts.LOOPS, body):
        return f"the kernel reads {where} in a loop: the swap reads the indices outside loops"
    loads = [n for n in ts.walk(value) if n.type in ("call_expression", "subscript_expression")
             or n.type == "pointer_expression" and ts.text(
                 n.child_by_field_name("operator")) == "*"]
    if loads:
        return (f"{where} is computed with {ts.text(loads[0])}: an index computation reads "
                "the built-in indices and scalars only")
    again = [n for n, _ in ts.declarators(decl) if n not in values]
    if again:
        return (f"{again[0]}, computed from the built-in indices (line {ts.first_line(decl)}), "
                "is assigned again (or declared twice): not one index computation")
    return decl


def _warp_shape(blocks: list[tuple[int, int, int]]) -> str:
    """Why a warp of the blocks would span no more of y swapped than it does of it as
    written ('' when it would): as written it spans min(by, 32 / bx) values of y, swapped
    min(by, 32)."""
    for bx, by, _ in blocks:
        across = min(WARP, bx)
        if min(by, WARP) <= min(by, WARP // across):
            return (f"a warp of a {bx} x {by} block already spans {min(by, WARP // across)} "
                    f"values of y, as many as it would span swapped: the swap would not "
                    "lengthen its contiguous runs")
    return ""


def _grid_fits(subject: Subject) -> str:
    """Why the grid's first dimension cannot become its second ('' when it can)."""
    spec = subject.spec
    for shape in spec.shapes:
        blocks = spec.resolve(shape, subject.point).launch.grid[0]
        if blocks > GRID_YZ_MOST:
            return (f"the grid's first dimension has {blocks} blocks at shape {shape.name}, more "
                    f"than its second may have ({GRID_YZ_MOST}): it cannot be swapped")
    return ""


def _swap_edits(declarations: list[Node], reads: list[Node]) -> tuple[Edit, ...]:
    """Each index computation's values with x and y swapped where the knob is set."""
    edits = []
    other = {"x": "y", "y": "x"}
    for decl in declarations:
        for _, d in ts.declarators(decl):
            value = d.child_by_field_name("value") if d.type == "init_declarator" else None
            mine = [r for r in reads if value is not None and ts.inside(r, value)]
            if value is None or not mine:
                continue
            new = ts.substituted(value, {r.id: f"{ts.text(r.child_by_field_name('argument'))}."
                                         f"{other[ts.text(r.child_by_field_name('field'))]}"
                                         for r in mine})
            edits.append(Edit(value.start_byte, value.end_byte,
                              tpl.when(KNOB, tpl.literal(new), ts.text(value))))
    return tuple(edits)


def _two(dims: Sequence[str]) -> list[str]:
    """A launch's first two dimensions as written (a missing one is 1)."""
    return [*(d.strip() for d in dims[:2]), *("1",) * (2 - len(dims[:2]))]


def _swapped(dims: Sequence[str]) -> tuple[str, ...]:
    """The launch's dimensions 0 and 1 swapped where the knob is set, as written where not."""
    x, y = _two(dims)
    def pick(on: str, off: str) -> str:
        return off if on == off else f"{_wrapped(on)} if {KNOB} else {_wrapped(off)}"
    return (pick(y, x), pick(x, y), *(d.strip() for d in dims[2:]))


def _wrapped(text: str) -> str:
    return text if _SIMPLE.fullmatch(text) else f"({text})"


# --- a flat index split the wrong way round ----------------------------------------------------

@dataclass(frozen=True)
class Extent:
    """The extent of a split index's quotient, as C text (the guard bounds it by that)."""

    text: str


def _flat(subject: Subject) -> Applied | Refused:
    kernel = subject.kernel
    body = ts.body(kernel)
    split = ts.split_index(kernel)
    if isinstance(split, str):
        return Refused(NAME, f"the block is one-dimensional and {split}: no coordinates to "
                             "swap")
    reads = [r for fn in subject.reached() for r in ts.builtin_reads(ts.body(fn))
             if not ts.inside(r, split.decl)]
    if reads:
        return Refused(NAME, f"the kernel reads {ts.text(reads[0])} (line "
                             f"{ts.first_line(reads[0])}) beyond its flat index: what a thread "
                             "computes would depend on which pair it is given")
    stray = [n for n in ts.walk(body) if n.type == "identifier" and ts.text(n) == split.index
             and not ts.inside(n, split.decl) and not ts.inside(n, split.modulo)
             and not ts.inside(n, split.division)]
    guard = _split_guard(subject, split, stray)
    if isinstance(guard, str):
        return Refused(NAME, guard)
    params = {p.name for p in ts.pointer_params(kernel)}
    accesses = _weighed(body, params, split.remainder, split.quotient)
    why = _verdict(accesses, split.remainder, split.quotient)
    if why:
        return Refused(NAME, why)
    extent = _wrapped(guard.text)
    edits = (Edit(split.modulo.start_byte, split.modulo.end_byte, tpl.when(
                 KNOB, tpl.literal(f"{_left(split.modulo)} / {extent}"), ts.text(split.modulo))),
             Edit(split.division.start_byte, split.division.end_byte, tpl.when(
                 KNOB, tpl.literal(f"{_left(split.division)} % {extent}"),
                 ts.text(split.division))))
    site = (f"{split.remainder} = {ts.text(split.modulo)}, {split.quotient} = "
            f"{ts.text(split.division)} -> {split.remainder} = {split.index} / {extent}, "
            f"{split.quotient} = {split.index} % {extent}: {_together(accesses)}; the launch "
            "as written")
    return Applied(NAME, (Knob(KNOB, (0, 1), 0),), edits, (site,))


def _left(division: Node) -> str:
    return ts.text(division.child_by_field_name("left"))


def _split_guard(subject: Subject, split: ts.Split, stray: list[Node]) -> Extent | str:
    """The quotient's extent, read from the guard that bounds both coordinates of the split,
    or why the swap could compute other pairs than the source: the index read beyond its
    split and its guard, the coordinates read outside what the guard covers, a guard that
    bounds one coordinate only."""
    body = ts.body(subject.kernel)
    guard = el.guard_of(body, {split.index, split.remainder, split.quotient})
    if guard is None:
        return (f"no `if` (without else) bounds {split.remainder} and {split.quotient}: the "
                "swap computes the same pairs only where both are bounded")
    conditions = guard.conditions()
    outside = [n for n in stray if not any(ts.inside(n, c) for c in conditions)]
    if outside:
        return (f"{split.index} is read beyond its split and its guard (line "
                f"{ts.first_line(outside[0])}): the swap changes only the coordinates")
    coordinates = ts.computed_from(body, {split.remainder, split.quotient})
    computed = _computations(body, coordinates)
    for n in ts.walk(body):
        if n.type == "identifier" and ts.text(n) in coordinates and not (
                guard.covers(n, body) or any(ts.inside(n, x) for x in (*conditions, *computed))):
            return (f"{ts.text(n)} is read outside what the guard at line "
                    f"{ts.first_line(guard.ifs[0])} covers (line {ts.first_line(n)}): the swap "
                    "computes the same pairs only under a guard on both")
    bounds = guard.bounds()
    if isinstance(bounds, str):
        return f"{bounds}: the swap cannot tell that it bounds both coordinates"
    return _extent(split, bounds, guard.ifs[0], body)


def _computations(body: Node, names: set[str]) -> list[Node]:
    """The declarations of `names` that compute without loads, calls or assignments: the
    same function of the coordinates whichever thread runs them, harmless outside the guard
    (what reads them is checked where it reads)."""
    return [n for n in ts.walk(body) if n.type == "declaration" and
            any(d in names for d, _ in ts.declarators(n)) and not any(
                m.type in ("call_expression", "subscript_expression", "assignment_expression",
                           "update_expression") or m.type == "pointer_expression" and
                ts.text(m.child_by_field_name("operator")) == "*" for m in ts.walk(n))]


def _extent(split: ts.Split, bounds: dict[str, Node], guard: Node, body: Node) -> Extent | str:
    """The quotient's extent E: from `index < D * E` (which then decides alone which pairs
    are computed), else from `remainder < D && quotient < E`."""
    divisor = ts.compact(ts.bare(split.divisor))
    extent: Node | None = None
    if split.index in bounds:
        product = ts.bare(bounds[split.index])
        if product.type == "binary_expression" and \
                ts.text(product.child_by_field_name("operator")) == "*":
            factors = [product.child_by_field_name(s) for s in ("left", "right")]
            same = [ts.compact(ts.bare(f)) == divisor for f in factors]
            if any(same):
                extent = factors[1] if same[0] else factors[0]
        if extent is None:
            return (f"the guard bounds {split.index} by {ts.text(bounds[split.index])}, not by "
                    f"{ts.text(split.divisor)} times the other coordinate's extent: write it "
                    f"as `{split.index} < {ts.text(split.divisor)} * E` or bound both "
                    "coordinates")
    elif split.remainder in bounds and split.quotient in bounds:
        if ts.compact(ts.bare(bounds[split.remainder])) != divisor:
            return (f"the guard bounds {split.remainder} by {ts.text(bounds[split.remainder])}, "
                    f"not by the divisor {ts.text(split.divisor)}")
        extent = bounds[split.quotient]
    else:
        return (f"the guard at line {ts.first_line(guard)} does not bound both "
                f"{split.remainder} and {split.quotient} (nor {split.index} by their product): "
                "after the swap it would let other pairs through")
    why = _varies(extent, split, body) or _varies(split.divisor, split, body)
    return why or Extent(ts.text(extent))


def _varies(node: Node, split: ts.Split, body: Node) -> str:
    """Why `node` may differ between threads or change ('' when it is fixed for the launch:
    computed from the kernel's scalars, constants and local names declared once from such
    values, without loads or calls)."""
    changed = {ts.text(t) for n in ts.walk(body) if (t := ts.assigned(n)) is not None}
    local = {d for n in ts.walk(body) if n.type == "declaration" for d, _ in ts.declarators(n)}
    values = ts.fixed_values(body)
    coordinates = {split.index, split.remainder, split.quotient}
    pending, seen = [node], set[str]()
    while pending:
        here = pending.pop()
        odd = [n for n in ts.walk(here) if n.type in (
            "call_expression", "subscript_expression", "field_expression", "pointer_expression")
            or n.type == "identifier" and (ts.text(n) in changed | coordinates or
                                           ts.text(n) in local and ts.text(n) not in values)]
        if odd:
            return (f"{ts.text(node)} is not fixed for the launch ({ts.text(odd[0])}): the swap "
                    "divides by the extents of the coordinates, which must be the same "
                    "everywhere")
        for name in ts.identifiers(here) & set(values) - seen:
            seen.add(name)
            pending.append(values[name])
    return ""


MOVE = Move(
    NAME, ("uncoalesced_access", "memory_latency", "l2_bandwidth", "l1_bandwidth"),
    "swaps which coordinate a warp's adjacent threads step along (x and y of a 2-D launch, or "
    "the two parts of a flat index split by % and /) where they touch addresses far apart, so "
    "that their accesses become contiguous", apply,
    knobs=(KNOB,),
    never="never changes which elements are computed, the guard or the work: only which thread "
          "computes which element (and the launch's grid and block dimensions 0 and 1 with "
          "it); never swaps a kernel whose threads meet in shared memory, at barriers or in "
          "warp-level calls")
