"""diagnose(): one kernel's profile -> a Diagnosis with ranked findings, each citing the
compendium entries of the metrics it rests on. CPU profiles (perf or cachegrind metrics) go to
pragma_ncu.diagnose.cpu; everything here reads ncu's metrics."""

from __future__ import annotations

from pragma_ncu.diagnose import signals as sig
from pragma_ncu.diagnose.cite import MAX_ACTIONS, Knowledge, actions_for, cite, hot_lines
from pragma_ncu.diagnose.cpu import diagnose_cpu, is_cpu
from pragma_ncu.diagnose.detectors import DETECTORS, Context
from pragma_ncu.diagnose.model import Diagnosis, Finding, Roofline
from pragma_ncu.profile.model import KernelProfile, RuleResult

# Re-exported: callers import these from the engine (cite, Knowledge) as before.
__all__ = ["MAX_ACTIONS", "MIN_SCORE", "RULE_CLASSES", "Knowledge", "cite", "diagnose",
           "ranked_guidance", "roofline_of"]

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
MIN_SCORE = 0.02


def diagnose(k: KernelProfile, knowledge: Knowledge, ceiling_gbps: float | None = None,
             source_file: str | None = None) -> Diagnosis:
    """Rank the causes of lost time for one profiled kernel (a GPU kernel's ncu metrics, or a
    CPU function's perf / cachegrind metrics)."""
    if is_cpu(k):
        return diagnose_cpu(k, knowledge, ceiling_gbps, source_file)
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
        hotspots=hot_lines(k.hotspots, source_file), citations=citations, uncited=uncited,
    )


def _with_actions(f: Finding, knowledge: Knowledge, rules: tuple[RuleResult, ...]) -> Finding:
    matching = tuple(dict.fromkeys(r.rule for r in rules
                                   if f.bottleneck in RULE_CLASSES.get(r.rule, ())
                                   and r.kind in ("OPT", "WRN")))
    return Finding(f.bottleneck, f.title, round(f.score, 4), f.summary, f.evidence,
                   actions_for(f.bottleneck, knowledge), matching)


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
