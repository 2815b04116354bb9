"""The nouns of a source move: what it reads (a `Subject`: the kernel's source as plain text,
its syntax tree, its spec and what the profile found hot), and what it gives back: an `Applied`
(text edits and the knobs that choose among them, whose defaults give back the source byte for
byte) or a `Refused` (why the move does not fit this source).

A move never runs anything: it reads the tree and writes jinja2 text. The search, the
verification and the acceptance decide whether what it proposes is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pragma_ncu.spec.model import ParamValue, TaskSpec
from pragma_ncu.syntax.functions import reached
from pragma_ncu.syntax.tree import line_of, node_text, walk

Node = Any  # a tree_sitter.Node
KNOB_PREFIX = "PNCU_"  # every knob a move adds: never a name of the user's
# A source's text and its bytes (tree-sitter's offsets are bytes): UTF-8, any other byte kept as
# a surrogate escape, as the kernel file was read, so offsets and edits hold for every file.
_CODEC, _KEEP = "utf-8", "surrogateescape"
_BATCH = re.compile(r"(blockIdx|gridDim)\.[yz]")
_X_DIMENSION = re.compile(r"\b(threadIdx|blockIdx|blockDim|gridDim)\s*\.\s*x\b")
_ARITHMETIC = ("binary_expression", "parenthesized_expression", "cast_expression",
               "unary_expression")


def encode(text: str) -> bytes:
    return text.encode(_CODEC, _KEEP)


def decode(data: bytes) -> str:
    return data.decode(_CODEC, _KEEP)


@dataclass(frozen=True)
class Knob:
    """A parameter a move adds: a jinja2 variable of the template, or with `flag` a compiler
    flag (no text change). `default` is the value that reproduces the source."""

    name: str
    values: tuple[ParamValue, ...]
    default: ParamValue
    flag: str | None = None


@dataclass(frozen=True)
class Edit:
    """Replace the bytes [start, end) of the source with `template` (jinja2 text that renders
    exactly those bytes at the knobs' defaults; `pragma_ncu.coder.moves.template` checks it)."""

    start: int
    end: int
    template: str
    last: bool = False  # of the insertions at one place, goes last: next to the code after it
    # (an unroll pragma, which must stand right above its loop)


@dataclass(frozen=True)
class Applied:
    """A move that fits: its edits, its knobs, and what it changed in words."""

    move: str
    knobs: tuple[Knob, ...]
    edits: tuple[Edit, ...] = ()
    sites: tuple[str, ...] = ()  # "the loop at line 12", "tile[32][32]"
    grid: tuple[str, ...] | None = None  # new launch grid expressions (coarsen, block_size)
    fixed: tuple[str, ...] = ()  # declared parameters the rewrite needs held at the best's value
    block: tuple[str, ...] | None = None  # new launch block expressions (block_size)
    writes_block: bool = False  # the rewrite writes the block size as a number (launch_bounds)
    swaps_block: bool = False  # the new block is the old one's dimensions in another order
    # (as many threads: a number written for its size still holds), and no other move may set
    # the block beside it (coalesce)


@dataclass(frozen=True)
class Refused:
    move: str
    reason: str


@dataclass(frozen=True)
class Subject:
    """What a move reads. `data` is the source as bytes (tree-sitter's offsets are bytes)."""

    text: str
    tree: Node = field(compare=False, repr=False)
    kernel: Node = field(compare=False, repr=False)  # the kernel's function_definition
    spec: TaskSpec = field(compare=False, repr=False)  # the base's spec
    point: dict[str, ParamValue]  # the best's parameter values
    hot_lines: tuple[int, ...] = ()  # lines of this source the profile found hot, hottest first
    constants: dict[str, int] = field(default_factory=dict)  # #defines and -D values with ints
    macros: tuple[str, ...] = ()  # the declared parameters nvcc gets as -D
    registers: int | None = None  # per thread, of the best's build
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    max_registers_per_sm: int = 65536

    @property
    def data(self) -> bytes:
        return encode(self.text)

    def reached(self) -> tuple[Node, ...]:
        """The kernel and the functions of its file that it calls: the code that runs."""
        return reached(self.tree, self.kernel)

    @property
    def one_dimensional(self) -> bool:
        """The launch's grid and block have one dimension (any others written as 1)."""
        launch = self.spec.launch
        return all(d.strip() == "1" for d in (*launch.grid[1:], *launch.block[1:]))

    def batched_unfit(self) -> str:
        """Why the launch is not one-dimensional in all that a move of its x dimension changes
        ('' when it is): the block has one dimension, and the grid's others only repeat the
        kernel over batch coordinates, blockIdx.y or .z never in one expression with the x
        dimension's threadIdx, blockIdx, blockDim or gridDim (a grid flattened over two
        dimensions: reshaping x would move y's elements too). Such a move keeps grid[1:]."""
        launch = self.spec.launch
        if any(d.strip() != "1" for d in launch.block[1:]):
            return "the block is not one-dimensional"
        for fn in self.reached():
            for node in walk(fn):
                if node.type != "field_expression" or \
                        not _BATCH.fullmatch(node_text(node).replace(" ", "")):
                    continue
                top = node
                while top.parent is not None and top.parent.type in _ARITHMETIC:
                    top = top.parent
                if _X_DIMENSION.search(node_text(top)):
                    written = " ".join(node_text(top).split())
                    return (f"{node_text(node)} meets the x dimension in `{written}` "
                            f"(line {line_of(top)}): the grid's dimensions are not independent")
        return ""


@dataclass(frozen=True)
class Move:
    """One catalog entry: its name, the diagnosis classes that call for it and why, and the
    function that reads a subject."""

    name: str
    answers: tuple[str, ...]  # bottleneck classes (pragma_ncu.knowledge.schema.BOTTLENECKS)
    why: str  # what it changes and why that answers those classes, in a sentence
    apply: Callable[[Subject], Applied | Refused] = field(compare=False, repr=False)
    knobs: tuple[str, ...] = ()  # the names of the knobs it adds
    never: str = ""  # what it never does (for the docs and the trace)
