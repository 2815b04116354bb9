"""The CPU target's diagnosis rules, for a function profiled with perf or cachegrind.

Three readings, best first:
1. perf's top-down metrics (tma_*, percent of pipeline slots): one finding per level-1 category,
   scored by its share of slots; back-end bound is named memory or core bound by the level-2
   split, or, without level 2, by the cache-miss counts.
2. cachegrind's simulated counts (no hardware counters): a cycle-cost model, documented below,
   turns instructions, misses and mispredicts into estimated cycles; each cause is scored by its
   share of the estimated total.
3. perf's hardware events without top-down: the same cost model on measured counts, as shares of
   the measured cycles.

The cost model (cycles per event, for a typical 4-wide out-of-order core; a model, not a
measurement, and every summary says so):
    retiring work            Ir (instructions)                 x 0.25  (4 retire per cycle)
    L1 data miss, LL hit     D1mr + D1mw - DLmr - DLmw         x 12
    last-level data miss     DLmr + DLmw                       x 200   (served by DRAM)
    instruction-fetch miss   (I1mr - ILmr) x 12 + ILmr x 200
    branch mispredict        Bcm + Bim                         x 15    (pipeline refill)
cachegrind counts a last-level miss among the first-level misses too, so the L1 terms subtract
the last-level ones: a miss served by DRAM costs 200 cycles, not 212.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pragma_ncu.diagnose.cite import Knowledge, actions_for, cite, hot_lines
from pragma_ncu.diagnose.findings import Diagnosis, Evidence, Finding, Roofline
from pragma_ncu.profile.profiles import KernelProfile

CACHEGRIND = ("Ir", "I1mr", "ILmr", "Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw", "Bc", "Bi",
              "Bcm", "Bim", "D1_miss_rate", "LL_data_miss_rate", "branch_mispredict_rate",
              "D1_MPKI", "LL_MPKI")
PERF_EVENTS = ("cycles", "instructions", "branches", "branch-misses", "cache-references",
               "cache-misses", "L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads",
               "LLC-load-misses", "task-clock", "IPC")
# level-1 top-down metric -> its two level-2 parts
TOPDOWN = {
    "tma_frontend_bound": ("tma_fetch_latency", "tma_fetch_bandwidth"),
    "tma_bad_speculation": ("tma_branch_mispredicts", "tma_machine_clears"),
    "tma_retiring": ("tma_light_operations", "tma_heavy_operations"),
    "tma_backend_bound": ("tma_memory_bound", "tma_core_bound"),
}
CPU_METRICS = frozenset((*CACHEGRIND, *PERF_EVENTS, *TOPDOWN, *(p for ps in TOPDOWN.values()
                                                                 for p in ps)))

IR_CYCLES = 0.25  # cycles per instruction when nothing stalls: 4 retire per cycle
LL_HIT_CYCLES = 12.0  # an L1 miss served by the last-level cache
DRAM_CYCLES = 200.0  # a last-level miss served by DRAM (~70-100 ns at 2-3 GHz)
MISPREDICT_CYCLES = 15.0  # refilling the pipeline after a mispredicted branch
LLC_MPKI_MEMORY = 1.0  # LLC misses per 1000 instructions above which loops are memory bound
L1_MISS_MEMORY = 0.05  # L1 data load miss rate above which locality is poor
MIN_SCORE = 0.02
SIMULATED = ("Counts simulated by cachegrind, per call; the cycle weights are a model of a "
             "4-wide core, not measurements, and cachegrind simulates only the first- and "
             "last-level caches (no prefetchers, threads serialized).")
MEASURED = ("Counts measured by perf, per call; the cycle weights are a model of a 4-wide core, "
            "not measurements, so the shares are estimates of the measured cycles.")
# What the leading term of the cost model asks for, added to its finding's summary.
READINGS = {
    "retiring": "When this term leads, the work itself costs more than the misses: only fewer or "
                "wider (SIMD) instructions make the code faster.",
    "backend_memory": "Misses are the cost: better locality (blocking, contiguous access, "
                      "smaller data) cuts them.",
    "bad_speculation": "Each mispredict throws away the work started on the wrong path: make the "
                       "branch predictable or branchless.",
    "frontend_bound": "The hot code does not fit the instruction cache: shrink or regroup it.",
}
_TIME_NS = {"ns": 1.0, "us": 1e3, "usec": 1e3, "ms": 1e6, "msec": 1e6, "s": 1e9, "sec": 1e9}


def is_cpu(kernel: KernelProfile) -> bool:
    """True for a CPU profile: perf or cachegrind metric names, and no ncu-style names (ncu's
    all contain '__', e.g. gpu__time_duration.sum)."""
    names = set(kernel.metrics)
    return bool(names & CPU_METRICS) and not any("__" in n for n in names)


def diagnose_cpu(kernel: KernelProfile, knowledge: Knowledge,
                 ceiling_gbps: float | None = None, source_file: str | None = None,
                 resources: dict[str, float] | None = None,
                 compute: dict[str, float] | None = None) -> Diagnosis:
    """Rank the causes of lost time for one CPU function: top-down categories when perf
    measured them, else the cycle-cost model on cachegrind's or perf's counts (a build's
    resources and compute ceilings do not enter: the rules name no GPU resource)."""
    k = kernel
    found = [f for f in _findings(k) if f.score >= MIN_SCORE]
    found.sort(key=lambda f: -f.score)
    findings = tuple(replace(f, score=round(f.score, 4),
                             actions=actions_for(f.bottleneck, knowledge)) for f in found)
    duration = _duration_ns(k)
    roofline = Roofline(duration, None, None, None, ceiling_gbps,
                        "measured copy" if ceiling_gbps else "", None, "", None)
    metrics = [e.metric for f in findings for e in f.evidence]
    citations, uncited = cite(metrics + (["task-clock"] if duration else []), knowledge)
    return Diagnosis(
        kernel=k.name, classification=findings[0].bottleneck if findings else "none",
        roofline=roofline, findings=findings, guidance=(),
        hotspots=hot_lines(k.hotspots, source_file), citations=citations, uncited=uncited,
        hotspot_counts="instructions executed, simulated misses")


def _findings(k: KernelProfile) -> list[Finding]:
    if any(k.value(name) is not None for name in TOPDOWN):
        return topdown_findings(k)
    if k.value("Ir") is not None:
        return cost_findings(cachegrind_costs(k), SIMULATED)
    if k.value("instructions") is not None:
        return cost_findings(perf_costs(k), MEASURED, measured=k.value("cycles"))
    return []


def _duration_ns(k: KernelProfile) -> float | None:
    """task-clock (CPU time per call) in ns, when collected with a time unit we know."""
    metric = k.metrics.get("task-clock")
    if metric is None or isinstance(metric.value, str):
        return None
    scale = _TIME_NS.get(metric.unit.strip().lower())
    return float(metric.value) * scale if scale else None


# --- shared helpers --------------------------------------------------------------------------


def _ev(k: KernelProfile, name: str, note: str = "") -> Evidence | None:
    metric = k.metrics.get(name)
    return None if metric is None else Evidence(name, metric.value, metric.unit, note)


def _evidence(*items: Evidence | None) -> tuple[Evidence, ...]:
    return tuple(e for e in items if e is not None)


def _ratio(k: KernelProfile, num: str, den: str) -> float | None:
    a, b = k.value(num), k.value(den)
    return a / b if a is not None and b else None


def _n(x: float) -> str:
    """A count as people read it: 1.23 M, 45.6 k, 789."""
    for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:.3g}"


# --- 1. top-down -----------------------------------------------------------------------------


def topdown_findings(kernel: KernelProfile) -> list[Finding]:
    """One finding per level-1 top-down category perf measured, scored by its share of slots."""
    builders = {"tma_frontend_bound": _frontend, "tma_bad_speculation": _bad_speculation,
                "tma_retiring": _retiring, "tma_backend_bound": _backend}
    out = []
    for name, build in builders.items():
        pct = kernel.value(name)
        if pct is not None:
            out.append(build(kernel, pct))
    return out


def _score(pct: float) -> float:
    return min(max(pct / 100, 0.0), 1.0)


def _level2(k: KernelProfile, level1: str) -> tuple[Evidence, ...]:
    return _evidence(*(_ev(k, part, "level 2") for part in TOPDOWN[level1]))


def _mostly(k: KernelProfile, level1: str, labels: tuple[str, str]) -> str:
    """', mostly <label> (N% of slots)' for the larger level-2 part, or '' without level 2."""
    values = [k.value(part) for part in TOPDOWN[level1]]
    known = [(v, label) for v, label in zip(values, labels, strict=True) if v is not None]
    if not known:
        return ""
    value, label = max(known)
    return f", mostly {label} ({value:.0f}% of slots)"


def _ipc(k: KernelProfile) -> Evidence | None:
    ipc = k.value("IPC")
    if ipc is not None:
        return _ev(k, "IPC", "current cores retire at most ~4-6 per cycle")
    ratio = _ratio(k, "instructions", "cycles")
    return None if ratio is None else _ev(k, "instructions", f"IPC {ratio:.2f}")


def _branch_misses(k: KernelProfile) -> Evidence | None:
    rate = _ratio(k, "branch-misses", "branches")
    return _ev(k, "branch-misses", "" if rate is None else f"{rate:.2%} of branches")


def _frontend(k: KernelProfile, pct: float) -> Finding:
    mostly = _mostly(k, "tma_frontend_bound", ("fetch latency", "fetch bandwidth"))
    summary = (f"The front end left {pct:.0f}% of the pipeline slots empty: instructions were "
               "not fetched or decoded fast enough (instruction-cache or iTLB misses, taken "
               f"branches and resteers, decoder limits){mostly}. Measured by perf's top-down "
               "analysis.")
    return Finding("frontend_bound", f"Front-end bound ({pct:.0f}% of slots){mostly}",
                   _score(pct), summary,
                   _evidence(_ev(k, "tma_frontend_bound"), *_level2(k, "tma_frontend_bound"),
                             _ipc(k)))


def _bad_speculation(k: KernelProfile, pct: float) -> Finding:
    mostly = _mostly(k, "tma_bad_speculation", ("branch mispredicts", "machine clears"))
    rate = _ratio(k, "branch-misses", "branches")
    misses = "" if rate is None else f" {rate:.2%} of the branches were mispredicted."
    summary = (f"{pct:.0f}% of the pipeline slots did work that was thrown away after a branch "
               f"misprediction or a machine clear{mostly}.{misses} Measured by perf's top-down "
               "analysis.")
    return Finding("bad_speculation", f"Bad speculation ({pct:.0f}% of slots){mostly}",
                   _score(pct), summary,
                   _evidence(_ev(k, "tma_bad_speculation"), *_level2(k, "tma_bad_speculation"),
                             _branch_misses(k), _ev(k, "branches")))


def _retiring(k: KernelProfile, pct: float) -> Finding:
    ipc = k.value("IPC") or _ratio(k, "instructions", "cycles")
    at = "" if ipc is None else f" at {ipc:.2f} instructions per cycle"
    verdict = ("the core works efficiently, so only fewer or wider instructions speed it up "
               "(vectorization, a better algorithm, cheaper operations)" if pct >= 50 else
               "the other slots are lost to the causes ranked beside it")
    summary = (f"{pct:.0f}% of the pipeline slots retired useful micro-operations{at}: "
               f"{verdict}. Measured by perf's top-down analysis.")
    return Finding("retiring", f"Retiring ({pct:.0f}% of slots): useful work", _score(pct),
                   summary, _evidence(_ev(k, "tma_retiring"), *_level2(k, "tma_retiring"),
                                      _ipc(k)))


def _backend(k: KernelProfile, pct: float) -> Finding:
    bottleneck, why = _memory_or_core(k, pct)
    side = "memory" if bottleneck == "backend_memory" else "core"
    summary = (f"The back end could not accept work in {pct:.0f}% of the pipeline slots; "
               f"{why} Measured by perf's top-down analysis.")
    return Finding(bottleneck, f"Back-end bound: {side} ({pct:.0f}% of slots)", _score(pct),
                   summary, _evidence(_ev(k, "tma_backend_bound"),
                                      *_level2(k, "tma_backend_bound"), *_miss_evidence(k),
                                      _ipc(k)))


def _memory_or_core(k: KernelProfile, pct: float) -> tuple[str, str]:
    """(bottleneck, the sentence saying which way and why) for a back-end bound share."""
    memory, core = k.value("tma_memory_bound"), k.value("tma_core_bound")
    if memory is not None or core is not None:
        memory = memory if memory is not None else pct - (core or 0.0)
        core = core if core is not None else pct - memory
        side = "backend_memory" if memory >= core else "backend_core"
        return side, (f"by the level-2 split it is {'memory' if memory >= core else 'core'} "
                      f"bound ({memory:.0f}% of slots waiting on memory, {core:.0f}% on "
                      "execution units and long-latency operations).")
    mpki, l1 = _llc_mpki(k), _ratio(k, "L1-dcache-load-misses", "L1-dcache-loads")
    if mpki is None and l1 is None:
        return "backend_memory", ("without the level-2 split or cache-miss counts it is taken "
                                  "to be memory bound, the usual case; collect "
                                  "tma_memory_bound to confirm.")
    seen = ", ".join(s for s in (
        None if mpki is None else f"{mpki:.2f} last-level misses per 1000 instructions",
        None if l1 is None else f"an L1 data miss rate of {l1:.1%}") if s)
    if (mpki or 0.0) >= LLC_MPKI_MEMORY or (l1 or 0.0) >= L1_MISS_MEMORY:
        return "backend_memory", (f"without the level-2 split it is read as memory bound from "
                                  f"the cache misses: {seen} (memory bound from "
                                  f"{LLC_MPKI_MEMORY:g} per 1000 or {L1_MISS_MEMORY:.0%}).")
    return "backend_core", (f"without the level-2 split it is read as core bound, since cache "
                            f"misses are few: {seen} (memory bound from {LLC_MPKI_MEMORY:g} "
                            f"per 1000 or {L1_MISS_MEMORY:.0%}).")


def _llc_mpki(k: KernelProfile) -> float | None:
    misses, instructions = k.first("LLC-load-misses", "cache-misses"), k.value("instructions")
    return misses / instructions * 1000 if misses is not None and instructions else None


def _miss_evidence(k: KernelProfile) -> tuple[Evidence, ...]:
    l1 = _ratio(k, "L1-dcache-load-misses", "L1-dcache-loads")
    instructions = k.value("instructions")
    out = [_ev(k, "L1-dcache-load-misses", "" if l1 is None else f"{l1:.1%} of L1-dcache-loads")]
    for name in ("LLC-load-misses", "cache-misses"):
        value = k.value(name)
        mpki = value / instructions * 1000 if value is not None and instructions else None
        out.append(_ev(k, name, "" if mpki is None else f"{mpki:.2f} per 1000 instructions"))
    return _evidence(*out)


# --- 2./3. the cycle-cost model --------------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    """One term of the cycle-cost model: a cause and its estimated cycles per call."""

    bottleneck: str
    label: str  # e.g. "last-level data misses (DRAM)"
    cycles: float
    formula: str  # e.g. "DLmr+DLmw = 1.2 M per call x 200 cycles"
    evidence: tuple[Evidence, ...]


def _sum(k: KernelProfile, *names: str) -> float:
    return sum(k.value(n) or 0.0 for n in names)


def cachegrind_costs(kernel: KernelProfile) -> tuple[Cost, ...]:
    """The cost model's terms on cachegrind's simulated counts (see the module docstring)."""
    w = "cycles/miss (model)"
    ir, d1, dl = _sum(kernel, "Ir"), _sum(kernel, "D1mr", "D1mw"), _sum(kernel, "DLmr", "DLmw")
    i1, il, bm = _sum(kernel, "I1mr"), _sum(kernel, "ILmr"), _sum(kernel, "Bcm", "Bim")
    l1_hits = max(d1 - dl, 0.0)

    def ev(*items: tuple[str, str]) -> tuple[Evidence, ...]:
        return _evidence(*(_ev(kernel, name, note) for name, note in items))

    return (
        Cost("retiring", "executed instructions (retiring work)", ir * IR_CYCLES,
             f"Ir = {_n(ir)} per call x {IR_CYCLES:g} cycles",
             ev(("Ir", f"weight {IR_CYCLES:g} cycles/instruction: 4-wide core (model)"))),
        Cost("backend_memory", "last-level data misses (DRAM)", dl * DRAM_CYCLES,
             f"DLmr+DLmw = {_n(dl)} per call x {DRAM_CYCLES:g} cycles",
             ev(("DLmr", f"weight {DRAM_CYCLES:g} {w}"), ("DLmw", f"weight {DRAM_CYCLES:g} {w}"),
                ("LL_MPKI", "per 1000 Ir"), ("LL_data_miss_rate", "of data accesses"))),
        Cost("backend_memory", "L1 data misses that hit the last-level cache",
             l1_hits * LL_HIT_CYCLES,
             f"D1mr+D1mw-DLmr-DLmw = {_n(l1_hits)} per call x {LL_HIT_CYCLES:g} cycles",
             ev(("D1mr", f"less DLmr: weight {LL_HIT_CYCLES:g} {w}"),
                ("D1mw", f"less DLmw: weight {LL_HIT_CYCLES:g} {w}"),
                ("D1_miss_rate", "of data accesses"), ("D1_MPKI", "per 1000 Ir"),
                ("Dr", "data reads"), ("Dw", "data writes"))),
        Cost("frontend_bound", "instruction-cache misses",
             max(i1 - il, 0.0) * LL_HIT_CYCLES + il * DRAM_CYCLES,
             f"(I1mr-ILmr) = {_n(max(i1 - il, 0.0))} x {LL_HIT_CYCLES:g} + ILmr = {_n(il)} x "
             f"{DRAM_CYCLES:g} cycles per call",
             ev(("I1mr", f"less ILmr: weight {LL_HIT_CYCLES:g} {w}"),
                ("ILmr", f"weight {DRAM_CYCLES:g} {w}"))),
        Cost("bad_speculation", "branch mispredicts", bm * MISPREDICT_CYCLES,
             f"Bcm+Bim = {_n(bm)} per call x {MISPREDICT_CYCLES:g} cycles",
             ev(("Bcm", f"weight {MISPREDICT_CYCLES:g} cycles/mispredict (model)"),
                ("Bim", f"weight {MISPREDICT_CYCLES:g} cycles/mispredict (model)"),
                ("Bc", "conditional branches"), ("Bi", "indirect branches"),
                ("branch_mispredict_rate", "of branches"))),
    )


def perf_costs(kernel: KernelProfile) -> tuple[Cost, ...]:
    """The cost model's terms on perf's measured hardware events (no top-down available):
    loads only, and no instruction-cache event, so front-end stalls stay unexplained."""
    w = "cycles/miss (model)"
    ins, br = _sum(kernel, "instructions"), _sum(kernel, "branch-misses")
    llc_name = "LLC-load-misses" if kernel.value("LLC-load-misses") is not None else "cache-misses"
    llc, l1 = _sum(kernel, llc_name), _sum(kernel, "L1-dcache-load-misses")
    l1_hits = max(l1 - llc, 0.0)
    return (
        Cost("retiring", "retired instructions", ins * IR_CYCLES,
             f"instructions = {_n(ins)} per call x {IR_CYCLES:g} cycles",
             _evidence(_ev(kernel, "instructions", f"weight {IR_CYCLES:g} cycles (model)"),
                       _ipc(kernel))),
        Cost("backend_memory", "last-level cache misses (DRAM)", llc * DRAM_CYCLES,
             f"{llc_name} = {_n(llc)} per call x {DRAM_CYCLES:g} cycles",
             _evidence(_ev(kernel, llc_name, f"weight {DRAM_CYCLES:g} {w}"),
                       _ev(kernel, "LLC-loads"))),
        Cost("backend_memory", "L1 data misses that hit the last-level cache",
             l1_hits * LL_HIT_CYCLES,
             f"L1-dcache-load-misses-{llc_name} = {_n(l1_hits)} x {LL_HIT_CYCLES:g} cycles",
             _evidence(_ev(kernel, "L1-dcache-load-misses", f"less {llc_name}: weight "
                           f"{LL_HIT_CYCLES:g} {w}"), _ev(kernel, "L1-dcache-loads"))),
        Cost("bad_speculation", "branch mispredicts", br * MISPREDICT_CYCLES,
             f"branch-misses = {_n(br)} per call x {MISPREDICT_CYCLES:g} cycles",
             _evidence(_branch_misses(kernel), _ev(kernel, "branches"))),
    )


def cost_findings(costs: tuple[Cost, ...], caveat: str,
                  measured: float | None = None) -> list[Finding]:
    """One finding per bottleneck (the memory terms combined), scored by its share of the
    estimated cycles, or of the `measured` cycles when perf counted more than the model
    explains. The largest finding's title says it dominates."""
    estimated = sum(c.cycles for c in costs)
    total = max(estimated, measured or 0.0)
    if total <= 0:
        return []
    groups: dict[str, list[Cost]] = {}
    for cost in costs:
        groups.setdefault(cost.bottleneck, []).append(cost)
    top = max(groups, key=lambda b: sum(c.cycles for c in groups[b]))
    basis = (f"the estimated {_n(total)} cycles per call" if total == estimated else
             f"the {_n(total)} cycles per call perf measured (the model explains "
             f"{estimated / total:.0%} of them)")
    return [_cost_finding(parts, total, basis, caveat, b == top) for b, parts in groups.items()]


def _cost_finding(parts: list[Cost], total: float, basis: str, caveat: str,
                  top: bool) -> Finding:
    parts = sorted(parts, key=lambda c: -c.cycles)
    cycles = sum(c.cycles for c in parts)
    share = cycles / total
    label = parts[0].label
    if len(parts) > 1 and parts[1].cycles / total >= 0.01:
        label = f"data-cache misses, mostly {label},"
    what = (f"dominate (~{share:.0%} of estimated cycles)" if top else
            f"cost ~{share:.0%} of estimated cycles")
    terms = "; ".join(f"{c.label}: {c.formula} = {_n(c.cycles)} cycles "
                      f"(~{c.cycles / total:.0%})" for c in parts)
    summary = f"{terms}; shares of {basis}. {READINGS[parts[0].bottleneck]} {caveat}"
    return Finding(parts[0].bottleneck, f"{label[0].upper()}{label[1:]} {what}", share, summary,
                   tuple(e for c in parts for e in c.evidence))
