"""block_size: the threads per block as a knob, where the spec fixes them to a number and the
kernel is written for any block size.

Called for when the grid's shape, not the kernel's code, is what the profile blames: too few
blocks for the SMs (a smaller block makes more of them), a last wave that leaves SMs idle (a
different block count fills them), or blocks too small for the per-SM block limit to fill the
SM with warps (a larger block). Kernel Tuner's first knob is always this one; a spec written by
hand often fixes it (`block = ["256"]`, `grid = ["ceil_div(n, 256)"]`).

It fits only a one-dimensional launch whose block is a literal B, in a kernel that is written
for any block size: it reads `blockDim.x`, and B appears nowhere in its code (no array sized
by it, no loop bound, no `__launch_bounds__`, no `#define` of that value), so that the block
size reaches the code only through `blockDim`. Then the block becomes the knob and every B in
the launch grid's expressions with it (`ceil_div(n, 256)` -> `ceil_div(n, BLOCK)`: the grid
still covers the problem); the source is not edited. With a static `__shared__` array the
block only shrinks (a kernel that stages one element per thread was sized for at most B
threads). BLOCK = B is the launch as written; every value is verified at every shape, odd ones
included, like any other point.
"""

from __future__ import annotations

import re

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves.base import Applied, Knob, Move, Refused, Subject

NAME = "block_size"
KNOB = "PNCU_BLOCK"
WARP = 32
SMALLEST, LARGEST = 64, 1024
_LITERAL = re.compile(r"^\d+$")


def apply(subject: Subject) -> Applied | Refused:
    launch = subject.spec.launch
    block = [b.strip() for b in launch.block]
    why = subject.batched_unfit()
    if why:
        return Refused(NAME, why)
    if not _LITERAL.match(block[0]):
        return Refused(NAME, f"the block size is an expression ({block[0]}): a parameter of the "
                             "spec already, searched as one")
    size = int(block[0])
    why = _unfit(subject, size) or _uncovered(subject, size)
    if why:
        return Refused(NAME, why)
    counts = re.search(rf"\b{size}\b", launch.grid[0]) is not None
    shrink_only = _has_static_shared(subject)
    if shrink_only and not counts:
        return Refused(NAME, "a static __shared__ array allows only smaller blocks, and on a "
                             "grid that does not count threads they only mean fewer threads")
    values = _values(size, shrink_only)
    if len(values) < 2:
        return Refused(NAME, f"no other block size fits beside {size}")
    site = (f"block {size} -> {KNOB} in {', '.join(map(str, values))}; "
            + (f"the grid follows it ({launch.grid[0]})" if counts else
               f"the grid as written ({launch.grid[0]}: it does not count threads)"))
    return Applied(NAME, (Knob(KNOB, values, size),), (), (site,), block=(KNOB, *block[1:]))


def _unfit(subject: Subject, size: int) -> str:
    """Why the kernel is not written for any block size ('' when it is)."""
    kernel = subject.kernel
    if any(c.type == "launch_bounds" for c in kernel.children):
        return "the kernel has __launch_bounds__ (written for its block size)"
    reach = subject.reached()
    if not any(ts.uses_builtin(fn, "blockDim") for fn in reach):
        return ("the kernel never reads blockDim: its code assumes the block size (a tile or "
                "a thread count written as a number)")
    if any(re.search(rf"(?<![\w.]){size}(?![\w.])", ts.text(fn)) for fn in reach):
        return f"the number {size} appears in the kernel's code: it may be the block size"
    same = sorted(n for n, v in subject.constants.items() if v == size)
    if same:
        return f"{', '.join(same)} = {size}, the block size: the code may size things by it"
    return ""


def _uncovered(subject: Subject, size: int) -> str:
    """Why another block size would change the work the launch covers ('' when it would
    not): the grid must count threads (name the block size), or the kernel must not index
    the whole grid (a block per row that strides by blockDim covers its row at any size)."""
    launch = subject.spec.launch
    if re.search(rf"\b{size}\b", str(launch.shared_mem)):
        return f"the dynamic shared memory ({launch.shared_mem}) is sized by the block"
    if re.search(rf"\b{size}\b", launch.grid[0]):
        return ""
    reach = [ts.text(fn) for fn in subject.reached()]
    if any(ts.grid_strided(code) for code in reach):  # covers its elements at any size
        return ""
    if any(ts.block_offsets(code) for code in reach):
        return (f"the grid ({launch.grid[0]}) does not count threads but the kernel indexes "
                "the whole grid (blockIdx.x * blockDim.x): another block size would cover "
                "other elements")
    return ""


def _has_static_shared(subject: Subject) -> bool:
    return any(not a.extern for a in ts.shared_arrays(subject.tree))


def _values(size: int, shrink_only: bool) -> tuple[int, ...]:
    """The block sizes to try: halvings and doublings of `size` within [64, 1024], whole
    warps; `size` first."""
    out = [size]
    for factor in (0.25, 0.5, 2, 4):
        value = int(size * factor)
        if SMALLEST <= value <= LARGEST and value % WARP == 0 and value not in out and \
                not (shrink_only and value > size):
            out.append(value)
    return (size, *sorted(out[1:]))


MOVE = Move(
    NAME, ("small_grid", "tail_effect", "occupancy_block"),
    "makes the threads per block a knob (the grid follows it), for a grid too small or too "
    "coarse for the SMs", apply,
    knobs=(KNOB,),
    never="never edits the source, and never changes a kernel that reads its block size from "
          "anything but blockDim")
