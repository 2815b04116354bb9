"""block_reduce: a block's shared-memory tree reduction becomes warp shuffles: each warp
combines its threads' values with `__shfl_down_sync`, lane 0 of each warp stores one value, one
barrier, the first warp combines those and thread 0 stores the block's value in slot 0, where
the tree left it, and a barrier makes it visible to every thread.

Called for when warps wait at barriers, when the tree's warps diverge or its shared accesses
conflict: the tree (`pragma_ncu.syntax.trees`) takes log2(B) barriers and as many rounds of
shared loads and stores, most of its warps idle after the first steps; the interleaved form
(`tid % (2 * s) == 0`) leaves every warp divergent and strides its shared accesses into
conflicting banks. Shuffles take two barriers whatever the block and exchange registers:

    buf[tid] = acc;                              (stays)
    __syncthreads();                             (stays)
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {             the tree, replaced
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    ... buf[0] ...                               (stays: it holds the block's value)

Each tree of the kernel is replaced (a max and then a sum, as a log-sum-exp has): its combine
is its own update with the two slots written as registers, so a sum stays a sum (in another
order, which the spec's tolerance judges) and a min or max is exact. Where it reads a kernel,
see `reducing` (whole warps, a tree over exactly the block, every lane reaching it, slot 0 the
only one read after it). It leaves alone a column reduction that `block_columns` re-lays: that
move replaces the tree too, and makes the loads coalesced besides.
"""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import block_columns, reducing
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import Applied, Edit, Knob, Move, Refused, Subject

NAME = "block_reduce"
KNOB = "PNCU_BLOCK_REDUCE"
ON = KNOB  # 1: shuffles; 0: the tree as written


def apply(subject: Subject) -> Applied | Refused:
    found = reducing.read(subject)
    if isinstance(found, str):
        return Refused(NAME, found)
    if isinstance(block_columns.apply(subject), Applied):
        return Refused(NAME, "block_columns re-lays this column reduction, and replaces its "
                             "tree with warp shuffles too")
    data = subject.data
    edits, sites = [], []
    for number, (t, type_text) in enumerate(zip(found.trees, found.types, strict=True)):
        lead = ts.indentation(data, t.loop.start_byte) or ""
        edits.append(Edit(t.loop.start_byte, t.loop.end_byte, tpl.when(
            ON, tpl.literal(reducing.block_combination(t, type_text, lead, number)),
            ts.text(t.loop))))
        sites.append(f"the {t.form} tree over {t.array} at line {ts.first_line(t.loop)} "
                     f"({t.combine}, {found.block} threads): warp shuffles and two barriers "
                     f"in place of {found.block.bit_length() - 1}")
    return Applied(NAME, (Knob(KNOB, (0, 1), 0),), tuple(edits), tuple(sites))


MOVE = Move(
    NAME, ("barrier_stall", "warp_divergence", "shared_bank_conflicts", "latency_bound"),
    "replaces a block's shared-memory tree reduction (log2(B) barriers, divergent or "
    "conflicted steps) by warp shuffles and one barrier between the warps", apply,
    knobs=(KNOB,),
    never="never changes the launch or the kernel's arguments, nor what the threads store "
          "before the tree; touches only a tree over exactly the block, of a sum, min or max, "
          "whose other slots nothing reads after it; a sum is taken in another order (the "
          "spec's tolerance judges it)")
