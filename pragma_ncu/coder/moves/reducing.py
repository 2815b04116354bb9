"""What the moves that rewrite a block's shared-memory tree reductions share (`block_reduce`,
`block_columns`): the trees of a kernel read with the checks both rewrites need, and the warp
shuffles they write in a tree's place.

A tree (`pragma_ncu.syntax.trees`) is rewritten only where the rewrite computes what it did:
the block is a number of whole warps that the tree reduces exactly (a power of two, its slots
[0, blockDim.x) into slot 0), every thread of a warp reaches it (no return, no jump out of a
loop around it before it, no condition that differs between a warp's lanes around it: the
shuffles need the whole warp), its slots are a one-dimensional `__shared__` array of a plain
arithmetic type, and after the tree no code reads a slot other than slot 0 (the shuffles leave
the others as the threads stored them; the tree left partial results there).
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import dealing
from pragma_ncu.coder.moves.base import Subject
from pragma_ncu.syntax import reductions as rd
from pragma_ncu.syntax import trees as tr

WARP = 32
LOCAL = dealing.LOCAL
THREAD = "threadIdx.x"
FULL = "0xffffffffu"  # every lane of the warp: the rewrites shuffle where all 32 lanes are


@dataclass(frozen=True)
class Reading:
    """A kernel's trees (in source order), the element type of each one's slots, the block's
    threads and the names that hold threadIdx.x."""

    trees: tuple[tr.Tree, ...]
    types: tuple[str, ...]
    block: int
    threads: frozenset[str]


def block_threads(subject: Subject) -> int | str:
    """The threads of the spec's block, a number of whole warps on one dimension, or why the
    rewrite cannot know them."""
    block = [b.strip() for b in subject.spec.launch.block]
    if any(b != "1" for b in block[1:]):
        return "the block is not one-dimensional: threadIdx.x does not number its threads"
    if not block[0].isdigit():
        return (f"the block size is an expression ({block[0]}): the tree's strides are worked "
                "out at the block the spec launches, written as a number")
    threads = int(block[0])
    if threads % WARP or not 0 < threads <= 1024:
        return f"a block of {threads} threads is not a whole number of warps (up to 1024)"
    return threads


def read(subject: Subject) -> Reading | str:
    """The kernel's trees with what both rewrites need of them, or why none can be rewritten."""
    body = ts.body(subject.kernel)
    arrays = {a.name: a for a in ts.shared_arrays(subject.kernel)}
    threads = tr.holding(body, THREAD)
    if tr.trees(body, threads, set(arrays), subject.constants) == ([], []):
        return ("no shared-memory tree reduction over threadIdx.x (a loop halving or doubling "
                "a stride, a barrier ending each step)")
    block = block_threads(subject)
    if isinstance(block, str):
        return block
    if any(n.type == "identifier" and ts.text(n).startswith(LOCAL) for n in ts.walk(body)):
        return f"the kernel has names of its own that begin with {LOCAL}"
    found, why = tr.trees(body, threads, set(arrays), {**subject.constants, "blockDim.x": block})
    if not found:
        return why[0]
    for t in found:
        unfit = _unfit(subject, t, arrays[t.array], block) or _slots_read(body, t, found)
        if unfit:
            return unfit
    return Reading(tuple(found), tuple(arrays[t.array].type for t in found), block,
                   frozenset(threads))


def _unfit(subject: Subject, t: tr.Tree, array: ts.SharedArray, block: int) -> str:
    body, line = ts.body(subject.kernel), ts.first_line(t.loop)
    if t.width != block:
        return (f"the tree at line {line} reduces {t.width} slots and the block has {block} "
                "threads: the shuffles would combine another set")
    if len(array.dims) > 1 or array.type not in rd.ARITHMETIC:
        return (f"the tree's slots ({array.name}, line {ts.first_line(array.decl)}) are no "
                f"one-dimensional array of a plain arithmetic type ({array.type})")
    leaves = tr.leaves_before(body, t.loop)
    if leaves is not None:
        return (f"a thread may leave before the tree at line {line} ({ts.text(leaves)}, line "
                f"{ts.first_line(leaves)}): every thread of a warp must reach the shuffles")
    around = tr.divergent_around(body, t.loop)
    if around is not None:
        return (f"the tree at line {line} stands under a condition on the thread (line "
                f"{ts.first_line(around)}): every lane of a warp must reach the shuffles")
    if ts.indentation(subject.data, t.loop.start_byte) is None or \
            ts.pragma_before(subject.data, t.loop.start_byte):
        return f"the tree's loop at line {line} does not start its own line below no pragma"
    return ""


def _slots_read(body: ts.Node, t: tr.Tree, found: list[tr.Tree]) -> str:
    """Outside the trees, the slots are stored to, and read only at slot 0."""
    for n in ts.walk(body):
        if n.type != "identifier" or ts.text(n) != t.array or \
                any(ts.inside(n, other.loop) for other in found):
            continue
        access = n.parent
        if access is not None and access.type == "array_declarator":
            continue  # its declaration
        if access is None or access.type != "subscript_expression" or \
                access.child_by_field_name("argument") != n:
            return f"{t.array} is used otherwise than by element (line {ts.first_line(n)})"
        outer = access.parent
        if outer is not None and outer.type == "pointer_expression":
            return f"the address of {ts.text(access)} is taken (line {ts.first_line(n)})"
        stored = outer is not None and outer.type == "assignment_expression" and \
            outer.child_by_field_name("left") == access and \
            ts.text(outer.child_by_field_name("operator")) == "="
        if not stored and ts.compact(ts.address(access)[1]) != "0":
            return (f"{ts.text(access)} is read at line {ts.first_line(access)}, outside the "
                    f"tree: after the shuffles only {t.array}[0] holds what the tree leaves")
    return ""


# --- writing -------------------------------------------------------------------------------

def shuffles(type_text: str, combine: str, indent: str, lowest: str = "0") -> list[str]:
    """Lines that combine each lane's `pncu_v` with the lanes 16, 8, ... above it, down to
    the distance above `lowest` (C text), lane 0 ending with its warp's value (plain text)."""
    o = f"{LOCAL}o"
    return [f"{indent}for (int {o} = {WARP // 2}; {o} > {lowest}; {o} /= 2) {{",
            f"{indent}    const {type_text} {LOCAL}u = __shfl_down_sync({FULL}, {LOCAL}v, {o});",
            f"{indent}    {combine};",
            f"{indent}}}"]


def block_combination(t: tr.Tree, type_text: str, indent: str, number: int) -> str:
    """The tree's replacement (plain text, from the loop's first byte to its last): each warp
    combines its slots by shuffles, lane 0 of each warp stores the warp's value, one barrier,
    the first warp combines those, thread 0 stores the block's value in slot 0, a barrier."""
    inner, deeper = indent + "    ", indent + "        "
    warps, v = f"{LOCAL}warps{number}", f"{LOCAL}v"
    combine = t.combined(v, f"{LOCAL}u")
    last = shuffles(type_text, f"if ({THREAD} + {LOCAL}o < blockDim.x / {WARP}) {combine}",
                    deeper)
    lines = [f"{{  // the tree over {t.array} as warp shuffles: each warp's slots, then the "
             "warps' values",
             f"{inner}{type_text} {v} = {t.array}[{THREAD}];",
             *shuffles(type_text, combine, inner),
             f"{inner}__shared__ {type_text} {warps}[{WARP}];",
             f"{inner}if ({THREAD} % {WARP} == 0) {warps}[{THREAD} / {WARP}] = {v};",
             f"{inner}__syncthreads();",
             f"{inner}if ({THREAD} < {WARP}) {{",
             f"{deeper}{v} = {warps}[{THREAD} < blockDim.x / {WARP} ? {THREAD} : 0];",
             *last,
             f"{deeper}if ({THREAD} == 0) {t.array}[0] = {v};",
             f"{inner}}}",
             f"{inner}__syncthreads();",
             f"{indent}}}"]
    return "\n".join(lines)
