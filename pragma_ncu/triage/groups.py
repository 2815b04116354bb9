"""Kernels, not launches: an application's launches grouped by kernel on one side.

A group is one kernel (its full signature: the mangled symbol, else the demangled signature,
so every template instantiation is its own kernel) at one launch configuration (grid and
block dimensions and dynamic shared memory; the NVTX range too, when a profile carries one).
The durations of its launches, as their collector measured them (its target's
`launch_duration_us`), are the group's timing sample. Launch order plays no part.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pragma_ncu import backends
from pragma_ncu.profile.profiles import KernelProfile

Duration = Callable[[KernelProfile], "float | None"]  # a launch's duration (µs), or None

_GRID = ("launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z")
_BLOCK = ("launch__block_dim_x", "launch__block_dim_y", "launch__block_dim_z")
_TEMPLATE = re.compile(r"<.*>")


@dataclass(frozen=True)
class LaunchConfig:
    """How a kernel was launched; dimensions are (x, y, z), or (size,) when a report has only
    the totals, or () when it has neither."""

    grid: tuple[int, ...] = ()
    block: tuple[int, ...] = ()
    dynamic_smem: int | None = None  # bytes per block
    nvtx: str = ""

    def label(self) -> str:
        """'grid 32768 x block 256', with dynamic shared memory and NVTX when present."""
        if not self.grid and not self.block:
            return "launch not collected"
        parts = [f"grid {_dims(self.grid)} x block {_dims(self.block)}"]
        if self.dynamic_smem:
            parts.append(f"{self.dynamic_smem:,} B dynamic smem")
        if self.nvtx:
            parts.append(f"NVTX {self.nvtx}")
        return ", ".join(parts)


def _dims(dims: tuple[int, ...]) -> str:
    shown = dims[:1] if len(dims) == 3 and dims[1:] == (1, 1) else dims
    return "x".join(map(str, shown)) if len(shown) == 1 else "(" + ",".join(map(str, shown)) + ")"


def launch_config(kernel: KernelProfile) -> LaunchConfig:
    """A launch's configuration from LaunchStats' metrics (whatever of them was collected)."""
    def dims(names: tuple[str, ...], total: str) -> tuple[int, ...]:
        values = [kernel.value(n) for n in names]
        if all(v is not None for v in values):
            return tuple(int(v) for v in values if v is not None)
        size = kernel.value(total)
        return (int(size),) if size is not None else ()

    smem = kernel.value("launch__shared_mem_per_block_dynamic")
    return LaunchConfig(dims(_GRID, "launch__grid_size"), dims(_BLOCK, "launch__block_size"),
                        int(smem) if smem is not None else None, nvtx_range(kernel))


def nvtx_range(kernel: KernelProfile) -> str:
    """The NVTX range the launch ran in, when the profile carries one (string metrics whose
    names start with "nvtx"); "" otherwise."""
    parts = [str(m.value) for n, m in sorted(kernel.metrics.items())
             if n.lower().startswith("nvtx") and isinstance(m.value, str) and m.value]
    return "/".join(parts)


def signature(kernel: KernelProfile) -> str:
    """A kernel's identity on one side: the mangled symbol, else the demangled signature."""
    return kernel.mangled or kernel.display_name or kernel.name


def without_template(name: str) -> str:
    """'ns::gemm<64, 128>' -> 'ns::gemm': the function the instantiations share."""
    return _TEMPLATE.sub("", name).strip()


@dataclass(frozen=True)
class KernelGroup:
    """The launches of one kernel at one launch configuration, in report order."""

    signature: str
    name: str  # the demangled function name with its template arguments
    config: LaunchConfig
    launches: tuple[KernelProfile, ...]
    durations: tuple[float | None, ...]  # each launch's, in µs (None: not measured)
    # the median of the side's timing runs of this kernel, in µs, where its collector
    # measured no launch's duration (a CPU's: perf counts events, cachegrind simulates them)
    timing_us: float | None = None

    @property
    def durations_us(self) -> tuple[float, ...]:
        """The durations of the launches that have one (all of them, in a sane report)."""
        return tuple(d for d in self.durations if d is not None)

    @property
    def count(self) -> int:
        return len(self.launches)

    @property
    def total_us(self) -> float:
        """Device time of the whole group: the sum of its launches' durations, else its
        timing's median for each launch (0 where neither was measured)."""
        if self.durations_us:
            return sum(self.durations_us)
        return (self.timing_us or 0.0) * self.count

    @property
    def median_us(self) -> float:
        if self.durations_us:
            return statistics.median(self.durations_us)
        return self.timing_us or 0.0

    @property
    def base_name(self) -> str:
        return without_template(self.name)

    @property
    def first_index(self) -> int:
        return self.launches[0].index

    def representative(self) -> KernelProfile:
        """The launch whose duration is nearest the group's median (the earliest on a tie):
        the one a diagnosis reads, rather than every launch."""
        timed = [(k, d) for k, d in zip(self.launches, self.durations, strict=True)
                 if d is not None]
        if not timed:
            return self.launches[0]
        median = self.median_us
        return min(timed, key=lambda kd: (abs(kd[1] - median), kd[0].index))[0]


def group_launches(launches: Iterable[KernelProfile], duration: Duration | None = None
                   ) -> tuple[KernelGroup, ...]:
    """The launches grouped by kernel and launch configuration, groups in order of their
    first launch. `duration` reads a launch's duration: the target's whose collector measured
    them (default: the default target's, as `backends.collector_of` falls back to)."""
    read = duration or backends.default().launch_duration_us
    groups: dict[tuple[str, LaunchConfig], list[KernelProfile]] = {}
    for k in launches:
        groups.setdefault((signature(k), launch_config(k)), []).append(k)
    return tuple(KernelGroup(sig, members[0].name, config, tuple(members),
                             tuple(read(k) for k in members))
                 for (sig, config), members in groups.items())
