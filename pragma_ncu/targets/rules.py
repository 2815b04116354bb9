"""What a target asks of a spec beyond what every spec says: its `SpecRules`, applied by the
one validator (`spec.file`). A built-in target's own rules are `targets/<name>.py`; this noun
sits below the spec so that the spec layer can read them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LaunchOverrun:
    """One limit a launch exceeds: its code (threads_per_block, block_dims, grid_dims), what
    it bounds in words ("block dimension z"), the spec's field, the limit and the value."""

    code: str
    what: str
    field: str
    top: int
    value: int


@dataclass(frozen=True)
class LaunchLimits:
    """What a programming model fixes of every launch, whatever the device: threads per
    block, each block dimension, each grid dimension (CUDA's since sm_30: 1024; 1024 x 1024
    x 64; 2**31 - 1 x 65535 x 65535). A device may allow less (its worker says so)."""

    threads_per_block: int
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    model: str = "the programming model"  # whose limits these are, for messages

    def exceeded(self, grid: tuple[int, int, int], block: tuple[int, int, int]
                 ) -> LaunchOverrun | None:
        """The first limit the launch `grid` x `block` exceeds, else None."""
        threads = block[0] * block[1] * block[2]
        if threads > self.threads_per_block:
            return LaunchOverrun("threads_per_block", "threads per block", "launch.block",
                                 self.threads_per_block, threads)
        for what, dims, tops in (("block", block, self.block), ("grid", grid, self.grid)):
            for axis, (n, top) in enumerate(zip(dims, tops, strict=True)):
                if n > top:
                    return LaunchOverrun(f"{what}_dims", f"{what} dimension {'xyz'[axis]}",
                                         f"launch.{what}[{axis}]", top, n)
        return None


@dataclass(frozen=True)
class SpecRules:
    """The sources a target takes (by suffix; a `.j2` template of one too), whether the spec
    must give a [launch] (a C function has no launch geometry), the dtypes its arguments may
    have (None: all; or, with `c_types_only`, those C has a portable type for) and why,
    when it refuses C++ template arguments, why, the limits its programming model fixes of a
    launch (None: none), how messages name its compiler, and what a kernel's definition looks
    like (the coder's prompt asks for it and the check of a reply looks for it)."""

    target: str
    suffixes: tuple[str, ...]
    launch_required: bool = True
    dtypes: tuple[str, ...] | None = None
    c_types_only: bool = False
    dtypes_reason: str = ""
    template_args_refused: str = ""
    launch_limits: LaunchLimits | None = None
    compiler: str = "the compiler"  # how messages name what compiles its sources
    # What a kernel's definition looks like: the keyword before its name ("" for a plain
    # function, which C++ must give C linkage), and how the coder's prompt and the check of
    # its replies name it.
    kernel_keyword: str = "__global__"
    kernel_words: str = "__global__ function"
