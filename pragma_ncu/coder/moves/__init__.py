"""Profile-guided source moves: the standard, safe rewrites that answer a diagnosis, each one
module (what calls for it, the source it fits, its rewrite, its knobs) and one line below.

A move reads the kernel's syntax tree and proposes jinja2 edits whose knobs' defaults give back
the source byte for byte; the tune loop searches their knobs with the kernel's own, verifies
every point at every shape, and keeps a result only when it beats the best beyond noise.
"""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.coder.moves import (
    block_columns,
    block_reduce,
    block_size,
    cache_policy,
    coalesce,
    coarsen,
    fast_math,
    grid_size,
    launch_bounds,
    readonly,
    row_team,
    smem_pad,
    smem_tile,
    split_reduction,
    unroll,
    vectorize,
    vectorize_loops,
)
from pragma_ncu.coder.moves.base import Applied, Knob, Move, Refused, Subject

MOVES: tuple[Move, ...] = (
    smem_pad.MOVE,
    smem_tile.MOVE,
    block_columns.MOVE,
    block_reduce.MOVE,
    coalesce.MOVE,
    split_reduction.MOVE,
    row_team.MOVE,
    vectorize.MOVE,
    vectorize_loops.MOVE,
    coarsen.MOVE,
    readonly.MOVE,
    unroll.MOVE,
    launch_bounds.MOVE,
    fast_math.MOVE,
    cache_policy.MOVE,
    block_size.MOVE,
    grid_size.MOVE,
)


# What the moves read and write: CUDA sources (their edits are CUDA, and nvcc's options).
SOURCES = (".cu",)


def reads(source: Path) -> bool:
    """Whether the moves can read a kernel file (or a .j2 template of one), whatever target
    builds it."""
    return Path(source.name.removesuffix(".j2")).suffix.lower() in SOURCES


def by_name(name: str) -> Move:
    for m in MOVES:
        if m.name == name:
            return m
    raise KeyError(f"no move named {name!r} (there are {', '.join(m.name for m in MOVES)})")


__all__ = ["MOVES", "SOURCES", "Applied", "Knob", "Move", "Refused", "Subject", "by_name",
           "reads"]
