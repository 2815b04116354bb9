"""grid_size: more blocks for a grid-stride kernel launched on too few of them.

Called for when the grid is too small for the GPU's SMs. A kernel that walks its elements in a
grid-stride loop (`for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x *
blockDim.x)`) covers them whatever the grid, so a launch that fixes the grid to a few blocks
(`grid = ["NBLK"]`, a number chosen for another GPU) can take GRID times as many: each thread
then walks fewer elements, and more SMs walk them.

It fits only a one-dimensional launch of such a kernel whose blocks are interchangeable:
blockIdx appears only in the grid-stride index, and no argument is sized by what the grid is
written with (a per-block output, `partial[blockIdx.x]`, would change its length). GRID = 1 is
the launch as written; the source is not edited.
"""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves.base import Applied, Knob, Move, Refused, Subject
from pragma_ncu.infra.errors import ExpressionError
from pragma_ncu.spec import expr

NAME = "grid_size"
KNOB = "PNCU_GRID"
VALUES = (1, 2, 4, 8, 16)


def apply(subject: Subject) -> Applied | Refused:
    launch = subject.spec.launch
    if not subject.one_dimensional:
        return Refused(NAME, "the launch is not one-dimensional")
    code = [ts.text(fn) for fn in subject.reached()]
    if not any(ts.grid_strided(c) for c in code):
        return Refused(NAME, "no grid-stride loop (i += gridDim.x * blockDim.x): the grid "
                             "decides which elements are covered")
    uses = sum(c.count("blockIdx") for c in code)
    if uses != sum(ts.block_offsets(c) for c in code):
        return Refused(NAME, "blockIdx is read outside the grid-stride index: blocks are not "
                             "interchangeable (a per-block result?)")
    sized = _sized_by_grid(subject, launch.grid[0])
    if sized:
        return Refused(NAME, f"{sized} is sized by the grid's {launch.grid[0]}")
    grid = (f"({launch.grid[0].strip()}) * {KNOB}", *launch.grid[1:])
    site = f"grid {launch.grid[0]} -> {grid[0]}, {KNOB} in {', '.join(map(str, VALUES))}"
    return Applied(NAME, (Knob(KNOB, VALUES, 1),), (), (site,), grid=grid)


def _sized_by_grid(subject: Subject, grid: str) -> str:
    """An argument whose shape names something the grid is written with ('' when none)."""
    try:
        names = expr.names(grid)
    except ExpressionError:
        return "the grid"
    for arg in subject.spec.args:
        if any(names & expr.names(d) for d in arg.shape or ()):
            return f"args.{arg.name}"
    return ""


MOVE = Move(
    NAME, ("small_grid",),
    "launches a grid-stride kernel on GRID times as many blocks, for a grid too small for the "
    "SMs", apply,
    knobs=(KNOB,),
    never="never edits the source, and never changes the grid of a kernel whose blocks are "
          "not interchangeable")
