"""Honest coverage: which causes a report could not assess, and the ncu command that would.

Each cause needs some quantities (`quantities`); `NEEDS` lists, per cause,
alternatives of quantities, any one of which suffices. A cause assessed only through a weaker
proxy (the L1 wavefront ratio of the default set instead of sector counts) is listed too, as
"inferred", with what would confirm it. The command names the sections that carry what is
missing (`SECTION_OF`), for this kernel only, so a user can re-run the application at once.
"""

from __future__ import annotations

import re

from pragma_ncu.backends.cuda.diagnosis.signals import Signals
from pragma_ncu.diagnose.findings import Gap

# cause -> (alternatives of required quantities, proxies that only infer it)
NEEDS: dict[str, tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]] = {
    "memory_bandwidth": ((("dram",),), ()),
    "l2_bandwidth": ((("l2",),), ()),
    "l1_bandwidth": ((("l1",),), ()),
    "uncoalesced_access": ((("global_ld_bytes_per_sector",), ("global_st_bytes_per_sector",)),
                           ("l1_wavefronts_per_request",)),
    "shared_bank_conflicts": ((("shared_excess", "shared_wavefronts"),),
                              ("l1_wavefronts_per_request",)),
    "register_spills": ((("local_bytes", "spill_instructions"),
                         ("local_instructions", "spill_instructions")), ()),
    "local_memory": ((("local_bytes",), ("local_instructions",)), ()),
    "occupancy": ((("theoretical_occupancy",),), ()),
    "small_grid": ((("grid", "sms"),), ()),
    "tail_effect": ((("waves",),), ()),
    "launch_overhead": ((("duration_ns",),), ()),
    "warp_divergence": ((("lanes",),), ()),
    "compute": ((("pipe_FMA",), ("pipe_ALU",), ("pipe_XU",), ("pipe_FP64",), ("pipe_Tensor",)),
                ()),
    "memory_latency": ((("stalls",),), ()),
    "barrier_stall": ((("stalls",),), ()),
    "atomic_contention": ((("atomic_requests", "memory_requests"),), ("l2_atomic_busiest",)),
}
# quantity -> the ncu section that carries it (beside the default set's), as the section files
# of ncu 2025.3 define them (the memory tables are MemoryWorkloadAnalysis_Tables' built-ins)
SECTION_OF: dict[str, str] = {
    "stalls": "WarpStateStats", "lanes": "WarpStateStats",
    "global_ld_bytes_per_sector": "MemoryWorkloadAnalysis_Tables",
    "global_st_bytes_per_sector": "MemoryWorkloadAnalysis_Tables",
    "global_excess_sectors": "SourceCounters",
    "spill_instructions": "MemoryWorkloadAnalysis",
    "local_instructions": "MemoryWorkloadAnalysis", "l1_hit_rate": "MemoryWorkloadAnalysis",
    "shared_excess": "MemoryWorkloadAnalysis_Tables",
    "shared_wavefronts": "MemoryWorkloadAnalysis_Tables",
    "local_bytes": "MemoryWorkloadAnalysis_Tables",
    "local_sectors_per_request": "MemoryWorkloadAnalysis_Tables",
    "atomic_requests": "MemoryWorkloadAnalysis_Tables",
    "memory_requests": "MemoryWorkloadAnalysis_Tables",
    "pipe_FMA": "ComputeWorkloadAnalysis", "pipe_ALU": "ComputeWorkloadAnalysis",
    "pipe_XU": "ComputeWorkloadAnalysis", "pipe_FP64": "ComputeWorkloadAnalysis",
    "pipe_Tensor": "ComputeWorkloadAnalysis",
    "theoretical_occupancy": "Occupancy", "waves": "LaunchStats", "grid": "LaunchStats",
    "sms": "LaunchStats", "dram": "SpeedOfLight", "l2": "SpeedOfLight", "l1": "SpeedOfLight",
    "duration_ns": "SpeedOfLight",
}


def _have(s: Signals, quantity: str) -> bool:
    return s.stalls is not None if quantity == "stalls" else s.has(quantity)


def gaps(sig: Signals) -> tuple[Gap, ...]:
    """The causes this kernel's report lacks the quantities for, in NEEDS order."""
    out = []
    for cause, (alternatives, proxies) in NEEDS.items():
        if any(all(_have(sig, q) for q in alt) for alt in alternatives):
            continue
        missing = tuple(dict.fromkeys(q for q in alternatives[0] if not _have(sig, q)))
        sections = tuple(dict.fromkeys(SECTION_OF.get(q, "") for q in missing if q in SECTION_OF))
        inferred = any(sig.has(p) for p in proxies)
        out.append(Gap(cause, missing, sections, inferred))
    if not sig.k.hotspots:  # which source lines: what every cause's fix starts from
        out.append(Gap("source lines", ("warp-state samples per source line",),
                       ("SourceCounters",)))
    return tuple(out)


def collect_command(kernel_name: str, found: tuple[Gap, ...]) -> str:
    """The ncu command that collects what `found` lacks for this kernel alone."""
    sections = tuple(dict.fromkeys(sec for g in found for sec in g.sections if sec))
    if not sections:
        return ""
    base = re.sub(r"<.*", "", kernel_name).strip() or kernel_name
    parts = ["ncu", "--section", "SpeedOfLight", "--section", "LaunchStats",
             "--section", "Occupancy"]
    for sec in sections:
        if sec not in parts:
            parts += ["--section", sec]
    parts += ["-k", f"regex:{re.escape(base)}", "-o", "report", "./your_app"]
    return " ".join(parts)
