"""The raw evidence of a change between two profiles of one kernel: metric movements grouped by
compendium entry, launch/build/machine facts that differ, ncu rule results that appeared or
vanished, source lines whose share of stall samples moved, and what one side lacks.

Only what both sides have is compared; a metric one side lacks is counted in `coverage`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pragma_ncu import backends
from pragma_ncu.backends.base import Target
from pragma_ncu.knowledge.schema import MetricEntry
from pragma_ncu.profile.profiles import KernelProfile, RuleResult, SourceLine
from pragma_ncu.triage.report import ConfigChange, LineShift, RuleChange

MIN_MOVED = 0.05  # |log2(new/base)| below this (about 3.5%) is not a movement
MIN_FACT_CHANGE = 0.02  # relative change that makes a launch/build fact "changed"
MAX_LINES = 5
_DIGITS = re.compile(r"[\d.,%]+")
# Preferred spellings of a counter, most canonical first (the rest rank after them).
_SUFFIX_RANK = (".sum", ".ratio", ".pct", ".avg.pct_of_peak_sustained_elapsed",
                ".avg.pct_of_peak_sustained_active", ".avg", ".sum.per_second")


class Lookup(Protocol):
    """What evidence needs from the compendium."""

    def lookup(self, metric: str) -> MetricEntry | None: ...


@dataclass(frozen=True)
class Movement:
    """One compendium entry's metric on both sides; `moved` = min(1, |log2(new/base)|), so 1
    means doubled or halved (or appeared from nothing)."""

    metric: str
    entry: MetricEntry
    base: float
    new: float
    moved: float
    unit: str = ""


def moved(base: float, new: float) -> float:
    scale = max(abs(base), abs(new))
    if scale == 0:
        return 0.0
    eps = 0.01 * scale  # so that 0 -> x counts as a full movement, not an infinite one
    return min(1.0, abs(math.log2((abs(new) + eps) / (abs(base) + eps))))


def movements(base: KernelProfile, new: KernelProfile, knowledge: Lookup) -> tuple[Movement, ...]:
    """Every numeric metric both sides have and the compendium explains, one per entry (its
    canonical spelling), that moved by at least MIN_MOVED; by entry name."""
    by_entry: dict[str, list[Movement]] = {}
    for name in sorted(set(base.metrics) & set(new.metrics)):
        bv, nv = base.value(name), new.value(name)
        if bv is None or nv is None:
            continue
        entry = knowledge.lookup(name)
        if entry is None:
            continue
        by_entry.setdefault(entry.name, []).append(
            Movement(name, entry, bv, nv, moved(bv, nv), base.metrics[name].unit))
    chosen = (min(group, key=lambda m: (_rank(m.metric, m.entry.name), m.metric))
              for group in by_entry.values())
    return tuple(sorted((m for m in chosen if m.moved >= MIN_MOVED), key=lambda m: m.entry.name))


def _rank(metric: str, entry: str) -> int:
    if metric == entry:
        return 0
    tail = metric[len(entry):] if metric.startswith(entry) else ""
    return 1 + _SUFFIX_RANK.index(tail) if tail in _SUFFIX_RANK else len(_SUFFIX_RANK) + 1


# (label, metric or "a+b" sum or "a/b" ratio, unit, scale)
FACTS: tuple[tuple[str, str, str, float], ...] = (
    ("block size", "launch__block_size", "threads", 1.0),
    ("grid size", "launch__grid_size", "blocks", 1.0),
    ("registers/thread", "launch__registers_per_thread", "", 1.0),
    ("static shared mem/block", "launch__shared_mem_per_block_static", "B", 1.0),
    ("dynamic shared mem/block", "launch__shared_mem_per_block_dynamic", "B", 1.0),
    ("theoretical occupancy", "sm__maximum_warps_per_active_cycle_pct", "%", 1.0),
    ("local-memory (spill) bytes", "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum+"
     "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", "B", 1.0),
    ("global load sectors/request", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum/"
     "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "", 1.0),
    ("global store sectors/request", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum/"
     "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "", 1.0),
    ("active threads/warp instruction", "smsp__thread_inst_executed_per_inst_executed.ratio",
     "", 1.0),
    ("warp instructions executed", "smsp__inst_executed.sum", "", 1.0),
    ("SMs", "launch__sm_count", "", 1.0),
    ("SM clock", "gpc__cycles_elapsed.avg.per_second", "MHz", 1e-6),
    ("DRAM clock", "dram__cycles_elapsed.avg.per_second", "MHz", 1e-6),
)


def fact(kernel: KernelProfile, expr: str) -> float | None:
    """A FACTS expression's value: a metric, a sum "a+b" or a ratio "a/b"."""
    if "/" in expr:
        num, den = (kernel.value(p) for p in expr.split("/"))
        return num / den if num is not None and den else None
    values = [kernel.value(p) for p in expr.split("+")]
    return sum(v for v in values if v is not None) if any(v is not None for v in values) else None


def config_changes(base: KernelProfile, new: KernelProfile) -> tuple[ConfigChange, ...]:
    """The FACTS that differ by more than MIN_FACT_CHANGE, in FACTS order."""
    out = []
    for label, expr, unit, scale in FACTS:
        bv, nv = fact(base, expr), fact(new, expr)
        if bv is None or nv is None:
            continue
        if abs(nv - bv) > MIN_FACT_CHANGE * max(abs(bv), abs(nv)):
            out.append(ConfigChange(label, expr, bv * scale, nv * scale, unit))
    return tuple(out)


def _rule_key(r: RuleResult) -> tuple[str, str, str, str]:
    # Messages carry the side's numbers; without a title, compare their wording only.
    return (r.section, r.rule, r.kind, r.title or _DIGITS.sub("#", r.message)[:120])


def rule_changes(base_kernel: KernelProfile, new_kernel: KernelProfile,
                 target: Target | None = None) -> tuple[RuleChange, ...]:
    """The collector's advice (ncu's OPT/WRN/ERR rule results) present on one side only:
    appeared first, then vanished; each with the bottleneck classes it speaks to, as
    `target` (the collector's; default: the default target) says."""
    classes = (target or backends.default()).rule_classes
    def advice(k: KernelProfile) -> dict[tuple[str, str, str, str], RuleResult]:
        return {_rule_key(r): r for r in k.rules if r.kind in ("OPT", "WRN", "ERR")}

    base, new = advice(base_kernel), advice(new_kernel)
    out = []
    for change, mine, other in (("appeared", new, base), ("vanished", base, new)):
        for key in sorted(set(mine) - set(other)):
            r = mine[key]
            out.append(RuleChange(r.section, r.rule, change, r.kind, r.title or r.message[:80],
                                  r.speedup, classes(r.rule)))
    return tuple(out)


def line_shifts(base_kernel: KernelProfile, new_kernel: KernelProfile, limit: int = MAX_LINES
                ) -> tuple[LineShift, ...]:
    """The hot lines whose share of the sampled stalls moved most. Lines are matched by file and
    line number when both sides sampled the same file names, else by their source text (the
    code moved between versions)."""
    same_files = {Path(s.file).name for s in base_kernel.hotspots} == {Path(s.file).name
                                                              for s in new_kernel.hotspots}
    base, new = _shares(base_kernel.hotspots, same_files), _shares(new_kernel.hotspots, same_files)
    shifts = []
    for key in sorted(set(base) | set(new)):
        line_b, share_b = base.get(key, (None, 0.0))
        line_n, share_n = new.get(key, (None, 0.0))
        line = line_n or line_b
        assert line is not None
        shifts.append(LineShift(f"{Path(line.file).name}:{line.line}", line.text,
                                round(share_b, 4), round(share_n, 4), _top_stall(line)))
    shifts.sort(key=lambda s: (-abs(s.shift), s.location))
    return tuple(s for s in shifts[:limit] if abs(s.shift) >= 0.01)


def _shares(lines: tuple[SourceLine, ...], by_position: bool
            ) -> dict[str, tuple[SourceLine, float]]:
    total = sum(s.samples for s in lines)
    out: dict[str, tuple[SourceLine, float]] = {}
    for s in lines:
        key = (f"{Path(s.file).name}:{s.line}" if by_position or not s.text
               else " ".join(s.text.split()))
        first, share = out.get(key, (s, 0.0))
        out[key] = (first, share + (s.samples / total if total else 0.0))
    return out


def _top_stall(line: SourceLine) -> str:
    reasons = [(r, v) for r, v in line.stalls.items() if r != "selected"]
    return max(reasons, key=lambda rv: (rv[1], rv[0]))[0] if reasons else ""


def coverage(base: KernelProfile, new: KernelProfile) -> tuple[str, ...]:
    """What one side has and the other lacks: metrics (different GPUs or ncu versions collect
    different sets) and source counters."""
    notes = []
    for side, mine, other in (("BASE", base, new), ("NEW", new, base)):
        only = sorted(name for name in set(mine.metrics) - set(other.metrics)
                      if mine.value(name) is not None)
        if only:
            notes.append(f"{len(only)} metrics only on {side} (not compared), e.g. "
                         + ", ".join(only[:3]))
    lacking = [side for side, k in (("BASE", base), ("NEW", new)) if not k.hotspots]
    if lacking:
        where = "either side" if len(lacking) == 2 else lacking[0]
        notes.append(f"no source counters on {where}: source-line shifts unavailable "
                     "(profile with --source, or ncu's SourceCounters section)")
    return tuple(notes)
