"""Root cause before symptom: when causes co-occur, rank the one that produces the other first.

A small grid, low occupancy, scattered accesses, local memory or serialized atomics leave warps
waiting: the latency those symptoms show is their effect, not a separate cause. A divergent
branch keeps a pipe busy with idle lanes. A kernel too short to matter makes everything else
moot. `SYMPTOMS` says which cause can produce which finding; when both are found, the cause
takes the symptom's share of time (the time it puts at stake) and ranks first, and the
symptom's summary says what it follows from. A cause whose own evidence accounts for less than
a quarter of the symptom's share (`MIN_OWN`) is too small to explain it and keeps its own rank.

Healthy is healthy: a limit (a bandwidth, a pipe, issue) that runs near its ceiling while the
SMs have work (`NEAR_CEILING`) leaves little to gain there, so a loss elsewhere worth a fifth of
the kernel's time or more (`WORTH_FIXING`: idle SMs, latency, waste) ranks above it. The limit
stays in the list, above the smaller findings; it is what the kernel hits once the loss is gone.

A throughput finding needs its unit near its peak: a limit whose unit runs below
`NEAR_CEILING` is not what bounds the kernel when the stalls say the warps mostly wait (on
memory, a dependency, a barrier): the wait explains the unit's idle time, so the findings that
name it (`waiting`, handed over by the rules that read the stalls) are causes of that limit, with
the same `MIN_OWN` floor. Without stall data nothing is re-ranked: the picture of a busy unit
below its peak is all a report shows.

Headroom bounds a memory-side loss: scattered sectors, bank conflicts, local traffic, atomics or
exposed memory latency cost time only while the math pipes have cycles to spare. With a compute
pipe busy a share b of the active cycles, removing such a loss saves at most 1 - b of the time
(the pipe's work remains), so its share is capped there (`MEMORY_LOSSES`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from pragma_ncu.diagnose.findings import Finding

MIN_OWN = 0.25
NEAR_CEILING = 0.8
WORTH_FIXING = 0.2
LIMITS = ("memory_bandwidth", "l2_bandwidth", "l1_bandwidth", "compute_fma", "compute_sfu",
          "compute_fp64", "tensor_core", "instruction_issue")

COMPUTE_LIMITS = ("compute_fma", "compute_sfu", "compute_fp64", "tensor_core")
MEMORY_LOSSES = ("uncoalesced_access", "shared_bank_conflicts", "register_spills",
                 "local_memory", "atomic_contention", "memory_latency")

_OCCUPANCY = ("occupancy_registers", "occupancy_shared", "occupancy_block")
_LATENCY_ROOTS = ("launch_overhead", "small_grid", "tail_effect", *_OCCUPANCY,
                  "uncoalesced_access", "shared_bank_conflicts", "register_spills",
                  "local_memory", "atomic_contention", "barrier_stall", "memory_latency")
# symptom -> the causes that can produce it
SYMPTOMS: dict[str, tuple[str, ...]] = {
    "latency_bound": _LATENCY_ROOTS,
    "memory_latency": tuple(r for r in _LATENCY_ROOTS
                            if r not in ("memory_latency", "barrier_stall",
                                         "shared_bank_conflicts")),
    "small_grid": ("launch_overhead",),
    "tail_effect": ("launch_overhead",),
    **{o: ("launch_overhead", "register_spills", "local_memory") for o in _OCCUPANCY},
    **{c: ("warp_divergence",) for c in ("compute_fma", "compute_sfu", "compute_fp64",
                                         "tensor_core", "instruction_issue")},
    # Wasted sector bytes and local traffic load the memory they cross.
    **{b: ("uncoalesced_access", "register_spills", "local_memory")
       for b in ("memory_bandwidth", "l2_bandwidth")},
    "l1_bandwidth": ("uncoalesced_access", "shared_bank_conflicts", "register_spills",
                     "local_memory"),
}


def explains(root: str, symptom: str) -> bool:
    """Whether `root` can produce `symptom` (see SYMPTOMS)."""
    return root != symptom and root in SYMPTOMS.get(symptom, ())


def rank(findings: list[Finding], near_ceiling: dict[str, float] | None = None,
         waiting: Collection[str] = ()) -> list[Finding]:
    """Findings best explanation first: causes above the symptoms they produce, and losses
    worth fixing above limits that run near their ceiling. `near_ceiling` maps a limit
    finding's bottleneck to its unit's utilization while the SMs are active; `waiting` names
    the findings the stall data back as waits, which explain a limit below its peak."""
    findings = [_within_headroom(f, near_ceiling or {}) for f in findings]
    present = {f.bottleneck: f for f in findings}
    score = {name: f.score for name, f in present.items()}
    below = {b for b in present if b in LIMITS and (near_ceiling or {}).get(b, 1.0) < NEAR_CEILING}
    edges = [(root, symptom) for symptom in present for root in present
             if (explains(root, symptom) or (symptom in below and root in waiting
                                             and root != symptom))
             and present[root].score >= MIN_OWN * present[symptom].score]
    for _ in range(len(present)):  # causes chain (occupancy -> memory latency -> latency)
        changed = False
        for root, symptom in edges:
            if score[symptom] > score[root]:
                score[root], changed = score[symptom], True
        if not changed:
            break
    depth = {name: len(_ancestors(name, edges)) for name in present}
    worth = any(f.bottleneck not in LIMITS and score[f.bottleneck] >= WORTH_FIXING
                for f in findings)
    healthy = {b for b, level in (near_ceiling or {}).items() if level >= NEAR_CEILING}
    out = []
    for f in findings:
        causes = [root for root, symptom in edges if symptom == f.bottleneck]
        summary = f.summary + (f" Here it follows from {', '.join(causes)}." if causes else "")
        demoted = worth and f.bottleneck in healthy
        out.append((replace(f, score=score[f.bottleneck], summary=summary), f, demoted))
    out.sort(key=lambda t: (_tier(t[0].score, t[2]), -t[0].score, depth[t[0].bottleneck],
                            -t[1].score, t[0].bottleneck))
    return [f for f, _, _ in out]


def _tier(score: float, demoted: bool) -> int:
    """Findings worth fixing first, then limits at their ceiling, then the small findings."""
    if demoted:
        return 1
    return 0 if score >= WORTH_FIXING else 2


def _within_headroom(f: Finding, levels: dict[str, float]) -> Finding:
    """A memory-side loss capped at the time the busiest compute pipe leaves free."""
    busy = max((levels[c] for c in COMPUTE_LIMITS if c in levels), default=0.0)
    cap = max(0.0, 1.0 - busy)
    if f.bottleneck not in MEMORY_LOSSES or f.score <= cap:
        return f
    pipe = max((c for c in COMPUTE_LIMITS if c in levels), key=lambda c: levels[c])
    note = (f" At most {100 * cap:.0f}% of the time is at stake: {pipe} keeps its pipe busy"
            f" {100 * busy:.0f}% of the active cycles whatever the memory does.")
    return replace(f, score=cap, summary=f.summary + note)


def _ancestors(name: str, edges: list[tuple[str, str]]) -> set[str]:
    """The present causes that explain `name`, directly or through another symptom."""
    found: set[str] = set()
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for root, symptom in edges:
            if symptom == current and root not in found:
                found.add(root)
                frontier.append(root)
    return found
