"""diagnose(): one kernel's profile -> a Diagnosis with ranked findings, each citing the
compendium entries of the metrics it rests on."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from pragma_ncu.diagnose import signals as sig
from pragma_ncu.diagnose.detectors import DETECTORS, Context
from pragma_ncu.diagnose.model import Citation, Diagnosis, Finding, Roofline
from pragma_ncu.knowledge.schema import MetricEntry, Strategy
from pragma_ncu.profile.model import KernelProfile, RuleResult, SourceLine

# ncu rule identifiers -> the bottleneck classes they speak to.
RULE_CLASSES: dict[str, tuple[str, ...]] = {
    "UncoalescedGlobalAccess": ("uncoalesced_access",),
    "UncoalescedSharedAccess": ("shared_bank_conflicts",),
    "SharedMemoryConflicts": ("shared_bank_conflicts",),
    "SharedBankConflicts": ("shared_bank_conflicts",),
    "TheoreticalOccupancy": ("occupancy_registers", "occupancy_shared", "occupancy_block"),
    "AchievedOccupancy": ("occupancy_registers", "occupancy_shared", "occupancy_block",
                          "tail_effect", "small_grid"),
    "LaunchConfiguration": ("small_grid", "tail_effect"),
    "ThreadDivergence": ("warp_divergence",),
    "HighPipeUtilization": ("compute_fma", "compute_sfu", "compute_fp64", "tensor_core"),
    "CPIStall": ("memory_latency", "barrier_stall", "shared_bank_conflicts",
                 "atomic_contention"),
    "IssueSlotUtilization": ("memory_latency", "instruction_issue"),
    "SOLBottleneck": ("memory_bandwidth", "memory_latency"),
    "MemoryL2Compression": (),
}
MAX_ACTIONS = 3
MIN_SCORE = 0.02


class Knowledge(Protocol):
    """What diagnose needs from the compendium (pragma_ncu.knowledge.compendium.Compendium)."""

    def lookup(self, metric: str) -> MetricEntry | None: ...

    def strategies_for(self, bottleneck: str) -> list[Strategy]: ...


def diagnose(k: KernelProfile, knowledge: Knowledge, ceiling_gbps: float | None = None,
             source_file: str | None = None) -> Diagnosis:
    """Rank the causes of lost time for one profiled kernel."""
    ctx = Context.of(k)
    found = [f for f in (detect(ctx) for detect in DETECTORS) if f and f.score >= MIN_SCORE]
    found.sort(key=lambda f: -f.score)
    findings = tuple(_with_actions(f, knowledge, k.rules) for f in found)
    roofline = roofline_of(k, ceiling_gbps)
    metrics = [e.metric for f in findings for e in f.evidence] + _roofline_metrics()
    citations, uncited = cite(metrics, knowledge)
    return Diagnosis(
        kernel=k.name, classification=findings[0].bottleneck if findings else "none",
        roofline=roofline, findings=findings, guidance=ranked_guidance(k.rules),
        hotspots=_hot_lines(k.hotspots, source_file), citations=citations, uncited=uncited,
    )


def _with_actions(f: Finding, knowledge: Knowledge, rules: tuple[RuleResult, ...]) -> Finding:
    actions = [a for s in knowledge.strategies_for(f.bottleneck) for a in s.actions]
    matching = tuple(dict.fromkeys(r.rule for r in rules
                                   if f.bottleneck in RULE_CLASSES.get(r.rule, ())
                                   and r.kind in ("OPT", "WRN")))
    return Finding(f.bottleneck, f.title, round(f.score, 4), f.summary, f.evidence,
                   tuple(dict.fromkeys(actions))[:MAX_ACTIONS], matching)


def roofline_of(k: KernelProfile, ceiling_gbps: float | None) -> Roofline:
    duration = k.first(*sig.DURATION)
    dram = sig.dram_bytes(k)
    achieved = dram / duration if dram is not None and duration else None  # bytes/ns = GB/s
    dram_pct = k.first(*sig.DRAM_PCT)
    source = "measured copy" if ceiling_gbps else ""
    if not ceiling_gbps and achieved and dram_pct:
        ceiling_gbps, source = achieved / (dram_pct / 100), "ncu DRAM peak"
    pipe, busy, _ = sig.top_pipe(k)
    return Roofline(duration, dram, achieved, dram_pct, ceiling_gbps, source,
                    k.first(*sig.SM_PCT), pipe, busy if pipe else None)


def _roofline_metrics() -> list[str]:
    return [sig.DURATION[0], sig.DRAM_PCT[0], "dram__bytes_read.sum", sig.SM_PCT[0]]


def ranked_guidance(rules: tuple[RuleResult, ...]) -> tuple[RuleResult, ...]:
    """ncu's optimization advice (OPT/WRN), by its estimated speedup; shown beside, not as,
    the ranking."""
    advice = [r for r in rules if r.kind in ("OPT", "WRN", "ERR")]
    return tuple(sorted(advice, key=lambda r: -(r.speedup if r.speedup is not None else -1)))


def cite(metrics: Iterable[str], knowledge: Knowledge) -> tuple[tuple[Citation, ...],
                                                                  tuple[str, ...]]:
    citations, uncited = [], []
    for metric in dict.fromkeys(metrics):
        entry = knowledge.lookup(metric)
        if entry is None:
            uncited.append(metric)
            continue
        citations.append(Citation(metric, entry.name, entry.title, entry.meaning,
                                  entry.sources[0] if entry.sources else ""))
    return tuple(citations), tuple(uncited)


def _hot_lines(lines: tuple[SourceLine, ...], source_file: str | None) -> tuple[SourceLine, ...]:
    """The kernel's own file first (inlined header lines would otherwise crowd it out)."""
    if not source_file:
        return lines
    own = tuple(s for s in lines if s.file == source_file)
    return own + tuple(s for s in lines if s.file != source_file)
