"""smem_skew: skew a 1-D `__shared__` array by one element every bank row, `a[N]` ->
`a[N + (N >> S)]` and every `a[i]` -> `a[i + (i >> S)]` (S = 5 for 4-byte elements, 4 for
8-byte ones: the elements in the 32 banks' 128 bytes).

Called for by shared-memory bank conflicts. Lanes of a warp that read a 1-D array at indices a
multiple of a bank row apart (a binary search over a sorted table, whose probes at depth d lie
256 / 2^d apart; a tree reduction with interleaved addressing; a strided gather) hit one bank
many times. Skewing the index by one element every bank row (the conflict-free offset of
GPU Gems 3, ch. 39) spreads such indices over the banks and leaves a contiguous access
conflict-free. The mapping is one-to-one, so the kernel computes the same thing, provided
every use of the array goes through a subscript (a pointer into it, `sizeof` or a call would
see the new layout) and no index has a side effect (it is written twice). 2-D arrays are
`smem_pad`'s. SKEW = 0 is the source as written.
"""

from __future__ import annotations

from pragma_ncu.coder.moves import syntax as ts
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Node, Refused, Subject

NAME = "smem_skew"
KNOB = "PNCU_SMEM_SKEW"
# log2 of the elements of one size in the banks' 128 bytes: 4-byte words 32, 8-byte 16. A
# 2-byte pair shares a word (no conflict between its halves), and wider vectors are split
# into several transactions: neither maps to one shift.
SHIFTS = {4: 5, 8: 4}
SIDE_EFFECTS = ("assignment_expression", "update_expression", "call_expression")


def apply(subject: Subject) -> Applied | Refused:
    arrays = [a for a in ts.shared_arrays(subject.tree) if len(a[2]) == 1]
    if not arrays:
        return Refused(NAME, "no __shared__ array of one dimension with its size given")
    edits: list[Edit] = []
    sites, reasons = [], []
    for name, decl, (size,) in arrays:
        element = ts.text(decl.child_by_field_name("type")).strip()
        shift = SHIFTS.get(ts.ELEMENT_BYTES.get(element, 0))
        if shift is None:
            reasons.append(f"{name}: its elements are not of 4 or 8 bytes")
            continue
        indices, why = _indices(subject, name, decl)
        if why:
            reasons.append(f"{name}: {why}")
            continue
        n = _grouped(ts.text(size), size)
        edits.append(Edit(size.start_byte, size.end_byte, tpl.when(
            KNOB, tpl.literal(f"{n} + ({n} >> {shift})"), ts.text(size))))
        for index in indices:
            i = _grouped(ts.text(index), index)
            edits.append(Edit(index.start_byte, index.end_byte, tpl.when(
                KNOB, tpl.literal(f"{i} + ({i} >> {shift})"), ts.text(index))))
        sites.append(f"{name}[{ts.text(size)}] (line {ts.first_line(decl)}, "
                     f"{len(indices)} accesses)")
    if not sites:
        return Refused(NAME, "; ".join(reasons))
    return Applied(NAME, (Knob(KNOB, (0, 1), 0),), tuple(edits), tuple(sites))


def _indices(subject: Subject, name: str, decl: Node) -> tuple[list[Node], str]:
    """The index expression of every use of `name`, or why the array does not qualify."""
    uses = [n for n in ts.walk(subject.tree) if n.type == "identifier" and ts.text(n) == name
            and not (decl.start_byte <= n.start_byte and n.end_byte <= decl.end_byte)]
    indices = []
    for use in uses:
        parent = use.parent
        if parent is None or parent.type != "subscript_expression" or \
                parent.child_by_field_name("argument") != use:
            return [], "used other than element by element (the skew would change what it sees)"
        index = parent.child_by_field_name("indices") or parent.named_children[-1]
        if index.type == "subscript_argument_list":  # the grammar's [ ... ] node
            if len(index.named_children) != 1:
                return [], "indexed by a list"
            index = index.named_children[0]
        if any(n.type in SIDE_EFFECTS for n in ts.walk(index)):
            return [], "an index has a side effect or a call (the skew writes it twice)"
        if name in ts.identifiers(index):
            return [], "indexed by its own elements (nested accesses)"
        indices.append(index)
    if not indices:
        return [], "never used"
    if all(n.type == "number_literal" for n in indices):
        return [], "every index is a constant: no warp spreads over the banks"
    return indices, ""


def _grouped(text: str, node: Node) -> str:
    """`text` as one operand: parenthesized unless it is a name, a number or already
    parenthesized."""
    simple = node.type in ("number_literal", "identifier", "parenthesized_expression")
    return text if simple else f"({text})"


MOVE = Move(
    NAME, ("shared_bank_conflicts",),
    "skews a 1-D shared array by one element every bank row, spreading over the banks the "
    "lanes that read it a multiple of 32 words apart", apply,
    knobs=(KNOB,),
    never="never skews an array used through a pointer, sizeof or a call, nor one whose "
          "index has a side effect")
