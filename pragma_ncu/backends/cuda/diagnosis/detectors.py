"""One detector per bottleneck class: each reads the signals and returns a scored Finding.

A score estimates the share of the kernel's time the cause accounts for (0..1), so findings
from different detectors rank on one scale:
- an idle-SM cause (small grid, tail, short kernel) loses the SM time nothing runs in;
- a per-SM cause loses part of the time the SMs are active, so its share is scaled by the
  active fraction (a kernel that idles 60% of its SMs can lose at most 40% to anything else);
- a bandwidth limit takes the share of time its unit is busy moving useful bytes, the waste
  (unused sector bytes, local-memory traffic) going to the cause that creates it;
- a latency cause takes the share of active time no unit was near its limit (the exposure),
  split by the stall reason that names it.
Thresholds are stated where they are used, with the reason for each. Each detector needs some
quantities; when the report lacks them it returns None and coverage.py says what to collect.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pragma_ncu.backends.cuda.diagnosis.signals import (
    L2_CARRYING,
    LIMITERS,
    PIPES,
    Signals,
    occupancy_limiter,
)
from pragma_ncu.diagnose.findings import Evidence, Finding

Detector = Callable[[Signals], Finding | None]

PRACTICAL_DRAM = 0.85  # a large copy reaches ~85-88% of ncu's DRAM peak (H200: 4.1-4.2 of 4.8 TB/s)
AT_ROOFLINE = 0.90  # of the practical ceiling: what a copy of the same bytes would reach
BUSY = 0.60  # a unit above 60% of its peak is where the time goes, below it latency shows
SHORT_NS, FADE_NS = 5_000.0, 10_000.0  # ~2x a launch's own latency; beyond 10 µs it fades out
IDEAL_WAVEFRONTS = 4.0  # L1 wavefronts per request of a coalesced 16-byte access (the widest)
SHARED_ONLY_L2 = 0.05  # L2 traffic below 5% of the L1's: the L1 work is shared memory


def _f(bottleneck: str, title: str, score: float, summary: str, evidence: tuple[Evidence, ...]
       ) -> Finding:
    return Finding(bottleneck, title, max(0.0, min(1.0, score)), summary, evidence)


def dram_ceiling_fraction(s: Signals, ceiling_gbps: float | None) -> float | None:
    """Achieved DRAM bandwidth as a fraction of the practical ceiling: the measured copy
    ceiling when known, else PRACTICAL_DRAM of ncu's peak."""
    dram_bytes, duration = s.get("dram_bytes"), s.get("duration_ns")
    if ceiling_gbps and dram_bytes and duration:
        return dram_bytes / duration / ceiling_gbps
    return s.val("dram") / PRACTICAL_DRAM if s.has("dram") else None


def memory_bandwidth(s: Signals) -> Finding | None:
    """Busy moving bytes between the SMs and DRAM: DRAM's own load, or the L2's where it only
    carries that traffic and is the busier of the two (stores it absorbs, the crossing between
    L2 partitions): a streaming kernel below the roofline is still memory-bound."""
    dram, ceiling_gbps = s.val("dram"), s.ceiling_gbps
    unit, load = s.memory_traffic()
    if not s.has("dram") or load < BUSY:
        return None
    frac = dram_ceiling_fraction(s, ceiling_gbps) or 0.0
    at_roof = frac >= AT_ROOFLINE
    basis = "the measured copy ceiling" if ceiling_gbps and s.has("dram_bytes") else \
        f"a copy's practical {PRACTICAL_DRAM:.0%} of ncu's DRAM peak"
    title = (f"DRAM-bandwidth-bound, at the roofline ({frac:.0%} of {basis})" if at_roof else
             "Memory-bandwidth-heavy, below the roofline")
    carried = (f" and the L2, which only carries that traffic, at {s.val('l2'):.0%}"
               if unit == L2_CARRYING else "")
    summary = (f"DRAM runs at {dram:.0%} of its peak{carried}, {frac:.0%} of {basis}. "
               + ("Only fewer bytes (fusion, smaller types, reuse through cache) make it faster."
                  if at_roof else "More bytes in flight (wider loads, several elements per "
                  "thread) could push it to the roofline."))
    useful = (1 - _dram_waste(s)) * (1 - local_fraction(s))
    return _f("memory_bandwidth", title, load * s.active * useful, summary,
              (s.ev("dram", f"{frac:.0%} of {basis}", 100, "%"), s.ev("dram_bytes"),
               *((s.ev("l2", "carrying DRAM traffic", 100, "%"), s.ev("l2_reuse"))
                 if unit == L2_CARRYING else ())))


def _dram_waste(s: Signals) -> float:
    """The fraction of DRAM bytes that are unused parts of sectors: the global waste that got
    past L1 (a sector reused from L1 is fetched from DRAM once)."""
    waste = global_waste(s)
    if waste is None:
        return 0.0
    return waste[0] * (1 - s.val("l1_hit_rate"))


def l2_bandwidth(s: Signals) -> Finding | None:
    l2, dram = s.val("l2"), s.val("dram")
    # L2 carries every DRAM byte too: L2-bound means L2 work beyond the DRAM traffic.
    if not s.has("l2") or s.per_active("l2") < BUSY or not s.l2_serves_its_own():
        return None
    useful = (1 - global_waste_share(s)) * (1 - local_fraction(s))
    return _f("l2_bandwidth", "L2-bandwidth-bound: data served from L2 at its limit",
              l2 * useful,
              f"L2 runs at {l2:.0%} of its peak while DRAM runs at {dram:.0%}: the kernel re-reads "
              "data that stays in L2 (or moves local-memory or wasted sector traffic). Reuse it "
              "from registers or shared memory (tiling) so each byte crosses L2 once.",
              (s.ev("l2", "", 100, "%"), s.ev("dram", "", 100, "%")))


def global_waste(s: Signals) -> tuple[float, str, float] | None:
    """(fraction of fetched global sector bytes unused, metric, bytes used per sector) over
    loads and stores, weighted by their sectors (or instructions) where known."""
    parts = []
    for op in ("ld", "st"):
        used = s.get(f"global_{op}_bytes_per_sector")
        if used is None:
            continue
        weight = s.get(f"global_{op}_sectors")
        parts.append((1 - min(used, 32.0) / 32.0, weight, op, used))
    if not parts:
        return None
    if all(w is not None for _, w, _, _ in parts) and sum(w or 0 for _, w, _, _ in parts) > 0:
        total = sum(w or 0.0 for _, w, _, _ in parts)
        waste = sum(x * (w or 0.0) for x, w, _, _ in parts) / total
    else:
        waste = max(x for x, _, _, _ in parts)
    worst = max(parts, key=lambda p: p[0] * (p[1] or 1.0))
    return waste, s.readings[f"global_{worst[2]}_bytes_per_sector"].metric, worst[3]


def global_waste_share(s: Signals) -> float:
    found = global_waste(s)
    return found[0] if found else 0.0


def _memory_pressure(s: Signals) -> float:
    """How busy the memory levels (or the warps waiting on them) are while the SMs work:
    wasted or local traffic costs time in proportion."""
    return max(s.val("l1"), s.per_active("l2"), s.per_active("dram"),
               s.stall_share("long_scoreboard", "lg_throttle"))


def _wavefront_excess(s: Signals) -> float | None:
    """Fraction of L1 wavefronts beyond what even 16-byte coalesced accesses need (default
    set: no sector counts, but wavefronts and requests are there)."""
    r = s.get("l1_wavefronts_per_request")
    if r is None:
        return None
    return max(0.0, 1 - IDEAL_WAVEFRONTS / r) if r > 0 else 0.0


def _shared_only(s: Signals) -> bool:
    """L1 saturated while L2 sees almost nothing: the L1 work is shared memory."""
    return s.val("l2") < SHARED_ONLY_L2 * s.val("l1") * s.active


def uncoalesced(s: Signals) -> Finding | None:
    found = global_waste(s)
    if found is not None:
        waste, metric, used = found
        if waste < 0.25:  # below a quarter wasted, the access is near the width's ideal
            return None
        # The waste is a share of the global traffic only; local traffic is another cause's.
        return _f("uncoalesced_access", "Uncoalesced global memory access",
                  waste * (1 - local_fraction(s)) * _memory_pressure(s) * s.active,
                  f"Only {used:.1f} of each 32-byte sector fetched is used: {waste:.0%} of the "
                  "global traffic is wasted. Make consecutive threads touch consecutive "
                  "addresses.",
                  (Evidence(metric, round(used, 2), "byte/sector", "32 = every byte used"),
                   s.ev("global_excess_sectors"), s.ev("global_ld_sectors"),
                   s.ev("l2", "", 100, "%")))
    excess = _wavefront_excess(s)
    if excess is None or excess < 0.5 or _shared_only(s):
        return None
    return _f("uncoalesced_access", "Memory access pattern: L1 serves many wavefronts per "
              "request (uncoalesced access likely)", excess * _memory_pressure(s) * s.active,
              f"The L1 data pipe processes {s.val('l1_wavefronts_per_request'):.1f} wavefronts "
              f"per request (a coalesced 16-byte access needs at most {IDEAL_WAVEFRONTS:.0f}) "
              "while global traffic reaches L2: accesses of a warp are scattered over many "
              "sectors. This collection has no sector counts; shared-memory bank conflicts "
              "would look alike (see what was not assessed).",
              (s.ev("l1_wavefronts_per_request", f"ideal <= {IDEAL_WAVEFRONTS:.0f}"),
               s.ev("l1", "", 100, "%"), s.ev("l2", "", 100, "%")))


def bank_conflicts(s: Signals) -> Finding | None:
    excess, wavefronts = s.get("shared_excess"), s.get("shared_wavefronts")
    if excess is not None and wavefronts:
        ratio = excess / wavefronts
        if ratio < 0.2:  # a fifth of extra passes is where conflicts start to cost
            return None
        pressure = max(s.val("l1"), s.stall_share("mio_throttle", "short_scoreboard"))
        return _f("shared_bank_conflicts", "Shared-memory bank conflicts",
                  ratio * pressure * s.active,
                  f"{ratio:.0%} of shared-memory wavefronts are extra passes caused by bank "
                  "conflicts. Pad the shared array (e.g. [32][33]) or swizzle the index.",
                  (s.ev("shared_excess"), s.ev("shared_wavefronts"),
                   s.stall_ev("mio_throttle"), s.ev("l1", "", 100, "%")))
    wf_excess = _wavefront_excess(s)
    if excess is not None or wf_excess is None or wf_excess < 0.5 or not _shared_only(s):
        return None
    return _f("shared_bank_conflicts", "Memory access pattern: shared-memory wavefronts "
              "(bank conflicts likely)", wf_excess * s.val("l1") * s.active,
              f"The L1 data pipe processes {s.val('l1_wavefronts_per_request'):.1f} wavefronts "
              "per request while L2 sees almost no traffic: the L1 work is shared memory, "
              "serialized into many passes.",
              (s.ev("l1_wavefronts_per_request", f"ideal <= {IDEAL_WAVEFRONTS:.0f}"),
               s.ev("l1", "", 100, "%"), s.ev("l2", "", 100, "%")))


def local_fraction(s: Signals) -> float:
    """Local-memory traffic as a share of local + global traffic at L1 (bytes, else
    instructions)."""
    local = s.get("local_bytes")
    sectors = (s.get("global_ld_sectors") or 0.0) + (s.get("global_st_sectors") or 0.0)
    if local is not None and sectors > 0:
        return local / (local + 32.0 * sectors)
    if local is not None and s.get("dram_bytes"):
        return local / (local + (s.get("dram_bytes") or 0.0))
    li, gi = s.get("local_instructions"), s.get("global_instructions")
    if li is not None and gi is not None and li + gi > 0:
        return li / (li + gi)
    return 0.0


SCATTERED_LOCAL = 8.0  # sectors per local request: spills touch one slot per warp (4 sectors)


def spill_share(s: Signals) -> tuple[float | None, str]:
    """(share of local traffic that is register spilling, how it was told): from the spill
    instruction counts, else the build's ptxas report (spill bytes against the stack frame),
    else the access pattern (lanes scattered over their own slots are not spills); None when
    nothing tells."""
    spills, local = s.get("spill_instructions"), s.get("local_instructions")
    if spills is not None and local:
        return min(1.0, spills / local), s.readings["spill_instructions"].metric
    res = s.resources
    if res.get("stack") or res.get("spill_stores"):
        spilled = res.get("spill_stores", 0.0) + res.get("spill_loads", 0.0)
        return (1.0 if spilled >= res.get("stack", 0.0) else 0.0), "ptxas spill and stack bytes"
    per_request = s.get("local_sectors_per_request")
    if per_request is not None and per_request > SCATTERED_LOCAL:
        return 0.0, "local sectors per request (lanes scattered over their own slots)"
    return None, ""


def local_memory(s: Signals) -> Finding | None:
    frac = local_fraction(s)
    if frac < 0.1:  # a tenth of the traffic: below that, local memory is a side note
        return None
    pressure = _memory_pressure(s)
    share, told = spill_share(s)
    evidence = (s.ev("local_bytes"), s.ev("local_instructions"), s.ev("spill_instructions"),
                s.ev("local_sectors_per_request", "4 = one slot per warp, as spills"),
                s.ev("registers"))
    if share is None or share >= 0.5:  # spills are the usual source when nothing tells
        how = (f"{share:.0%} of it register spills ({told})" if share is not None else
               "most likely register spills; `nvcc -Xptxas -v` tells spills from stack arrays")
        return _f("register_spills", "Registers spill to local memory", frac * pressure * s.active,
                  f"{frac:.0%} of the memory traffic at L1 is local memory, {how}. Reduce live "
                  "values, unroll less, or allow more registers (__launch_bounds__ with fewer "
                  "blocks, a higher -maxrregcount).", evidence)
    return _f("local_memory", "Per-thread arrays in local memory", frac * pressure * s.active,
              f"{frac:.0%} of the memory traffic at L1 is local memory, and it is not spilling "
              f"({told}): a per-thread array indexed by a run-time value cannot live in "
              "registers. Index it with compile-time constants (full unroll), or keep it in "
              "shared memory.", evidence)


def occupancy(s: Signals) -> Finding | None:
    limiter = occupancy_limiter(s.k)
    theoretical = s.get("theoretical_occupancy")
    if limiter is None or theoretical is None or theoretical >= 0.999:
        return None
    name, blocks = limiter
    deficit = 1 - theoretical
    small_blocks = name == "launch__occupancy_limit_blocks" and s.val("block", 1024) <= 64
    if small_blocks and s.has("achieved_occupancy"):  # tiny blocks also starve the scheduler
        deficit = max(deficit, 1 - s.val("achieved_occupancy"))
    what = name.removeprefix("launch__occupancy_limit_").replace("_", " ")
    return _f(LIMITERS[name], f"Occupancy limited by {what}",
              deficit * s.exposure * s.active,
              f"Theoretical occupancy is {theoretical:.0%}: {what} allow only {blocks:.0f} "
              f"block(s) per SM, and with nothing busy ({s.busiest()[0]} at "
              f"{s.busiest()[1]:.0%}) too few warps hide the latency.",
              (s.ev("theoretical_occupancy", "", 100, "%"), s.ev_metric(name, "the smallest limit"),
               s.ev("registers"), s.ev("achieved_occupancy", "", 100, "%"), s.ev("block")))


def grid_size(s: Signals) -> Finding | None:
    grid, sms = s.get("grid"), s.get("sms")
    if not grid or not sms or grid >= sms:
        return None
    idle = 1 - grid / sms
    return _f("small_grid", "Too few blocks for the GPU", idle,
              f"{grid:.0f} blocks for {sms:.0f} SMs: {idle:.0%} of the SMs have no work. Split "
              "the work into more blocks (or use a grid-stride loop over more blocks).",
              (s.ev("grid"), s.ev("sms"), s.ev("sm_active", "fraction of time SMs had work")))


def tail_effect(s: Signals) -> Finding | None:
    waves = s.get("waves")
    if waves is None or waves <= 1 or waves > 8:  # past 8 waves a partial one costs < 6%
        return None
    full = math.ceil(waves)
    predicted = (full - waves) / full
    measured = 1 - s.active if s.has("sm_active") else None
    idle = min(predicted, measured) if measured is not None else predicted * 0.5
    if idle < 0.1:
        return None
    return _f("tail_effect", "Partial last wave (tail effect)", idle,
              f"{waves:.2f} waves of blocks: the last wave keeps only part of the SMs busy, and "
              f"the SMs idle for about {idle:.0%} of the time. Size the grid to whole waves, or "
              "use smaller blocks so the last wave is thinner.",
              (s.ev("waves"), s.ev("grid"), s.ev("sm_active", "fraction of time SMs had work")))


def launch_overhead(s: Signals) -> Finding | None:
    duration = s.get("duration_ns")
    if duration is None or duration >= FADE_NS:
        return None
    fade = 1.0 if duration <= SHORT_NS else (FADE_NS - duration) / (FADE_NS - SHORT_NS)
    share = max(0.5, 1 - s.active) * fade
    return _f("launch_overhead", "Kernel too short: launch and ramp-up dominate", share,
              f"The kernel runs {duration / 1000:.1f} µs, about as long as launching it; the SMs "
              f"are busy {s.active:.0%} of that. Fusing it with its neighbours or batching "
              "launches (CUDA graphs) saves more than tuning it.",
              (s.ev("duration_ns"), s.ev("sm_active", "fraction of time SMs had work")))


def divergence(s: Signals) -> Finding | None:
    idle = 1 - s.lanes
    if not s.has("lanes") or idle < 0.2:  # a fifth of lanes idle: branch structure matters
        return None
    return _f("warp_divergence", "Warp divergence", idle * s.val("issue", 0.5) * s.active,
              f"An average warp instruction runs {s.lanes * 32:.1f} of 32 lanes: the rest idle "
              "in divergent branches. Make the branch uniform per warp (reorder work by "
              "branch).",
              (s.ev("lanes", "32 = no divergence"),
               s.ev_metric("smsp__sass_average_branch_targets_threads_uniform.pct"),
               s.ev("issue", "", 100, "%")))


def compute(s: Signals) -> Finding | None:
    pipe, busy = s.top_pipe()
    if not pipe or busy < 0.5:  # half the pipe's peak: below that another limit dominates
        return None
    bottleneck = PIPES[pipe]
    at_roof = busy >= AT_ROOFLINE and s.lanes >= 0.9
    title = f"Compute-bound on the {pipe} pipe" + (", at the roofline" if at_roof else "")
    return _f(bottleneck, title, busy * s.lanes * s.active,
              f"The {pipe} pipe is busy {busy:.0%} of the active cycles. "
              + ("It runs near its peak: only fewer or cheaper instructions for the same result "
                 "(strength reduction, fast-math intrinsics, tensor cores) help." if at_roof else
                 "Fewer or cheaper instructions for the same result help, or more independent "
                 "work per thread to fill the pipe."),
              (s.ev(f"pipe_{pipe}", "% of peak while active", 100, "%"),
               s.ev("issue", "", 100, "%"), s.ev("sm", "", 100, "%")))


def issue_bound(s: Signals) -> Finding | None:
    issue = s.get("issue")
    if issue is None or issue < 0.8 or s.top_pipe()[1] >= BUSY:
        return None
    return _f("instruction_issue", "Instruction-issue-bound", issue * s.active,
              f"Schedulers issue on {issue:.0%} of active cycles with no single pipe saturated: "
              "the kernel executes too many instructions. Remove index arithmetic, use vector "
              "loads, unroll.", (s.ev("issue", "", 100, "%"),
                                 s.ev_metric("smsp__inst_executed.sum")))


def memory_latency(s: Signals) -> Finding | None:
    share = s.stall_share("long_scoreboard")
    if s.stalls is None or share < 0.3:  # under 30% of stalls the wait is not mainly memory
        return None
    return _f("memory_latency", "Memory latency exposed (too few bytes in flight)",
              share * s.exposure * s.active,
              f"{share:.0%} of warp stalls wait on global or local memory (long scoreboard) while "
              f"nothing is busy (the busiest unit, {s.busiest()[0]}, at {s.busiest()[1]:.0%}). "
              "Issue more independent loads per thread (wider vector loads, several rows per "
              "thread) so more bytes are in flight.",
              (s.stall_ev("long_scoreboard"), s.ev("dram", "", 100, "%"), s.ev("l2", "", 100, "%"),
               s.ev("achieved_occupancy", "", 100, "%")))


def latency_bound(s: Signals) -> Finding | None:
    if not (s.has("sm") and (s.has("dram") or s.has("l1"))) or s.exposure < 1 - BUSY:
        return None  # without the speed-of-light figures idleness cannot be told
    unit, busy = s.busiest()
    top = s.stalls.top(1) if s.stalls else []
    why = (f"Warps mostly stall on {top[0][0].replace('_', ' ')}." if top else
           "This collection has no warp-state statistics to say what the warps wait for.")
    return _f("latency_bound", "Latency-bound: no unit is busy", 0.9 * s.exposure * s.active,
              f"The busiest unit ({unit}) runs at {busy:.0%} of its peak while the SMs are "
              f"active: warps wait rather than work. {why}",
              (s.ev("sm", "", 100, "%"), s.ev("dram", "", 100, "%"), s.ev("l1", "", 100, "%"),
               s.ev("achieved_occupancy", "", 100, "%")))


def barrier(s: Signals) -> Finding | None:
    share = s.stall_share("barrier")
    if share < 0.2:  # a fifth of stalls at barriers: the block's warps are out of step
        return None
    return _f("barrier_stall", "Warps wait at barriers", share * s.exposure * s.active,
              f"{share:.0%} of stalls are warps waiting at __syncthreads: work between barriers "
              "is unbalanced across warps, or barriers are too frequent.",
              (s.stall_ev("barrier"), s.ev("block"), s.ev("issue", "", 100, "%")))


def atomics(s: Signals) -> Finding | None:
    """Atomics serialize when many updates hit few addresses: seen as atomics and reductions
    making up a good part of the global requests, or as one L2 slice's atomic unit busy while
    the others idle (ncu's default set carries the per-slice maximum)."""
    requests, atomic = s.get("memory_requests"), s.get("atomic_requests")
    frac = atomic / (atomic + requests) if atomic and requests is not None else 0.0
    hot, avg = s.get("l2_atomic_busiest"), s.val("l2_atomic_average")
    hot_slice = hot is not None and hot >= 0.3 and hot >= 10 * avg  # one slice does the work
    if frac < 0.1 and not hot_slice:  # a tenth of requests: below that atomics are incidental
        return None
    waiting = s.stall_share("long_scoreboard", "lg_throttle", "membar", "drain")
    strength = 1.0 if hot_slice else math.sqrt(frac) * max(waiting, 0.3)
    where = (f"the busiest L2 slice's atomic unit runs at {hot:.0%} while the average slice "
             f"runs at {avg:.1%}" if hot_slice and hot is not None else
             f"{frac:.0%} of global requests are atomics or reductions")
    return _f("atomic_contention", "Atomic operations serialize", strength * s.exposure * s.active,
              f"{where.capitalize()}, and nothing else is busy (busiest unit {s.busiest()[0]} "
              f"at {s.busiest()[1]:.0%}): updates to a few addresses queue in one place. "
              "Aggregate in registers or shared memory first, then one atomic per warp or block.",
              (s.ev("l2_atomic_busiest", "busiest L2 slice", 100, "%"),
               s.ev("l2_atomic_average", "average slice", 100, "%"), s.ev("atomic_requests"),
               s.ev("memory_requests"), s.stall_ev("long_scoreboard")))


def l1_bandwidth(s: Signals) -> Finding | None:
    l1 = s.get("l1")
    if l1 is None or l1 < BUSY:
        return None
    return _f("l1_bandwidth", "L1/shared-memory-bandwidth-bound", l1 * s.active,
              f"The L1/TEX unit (shared memory, and global or local accesses through L1) is busy "
              f"{l1:.0%} of the active cycles: the kernel moves data between L1 and the SM as "
              "fast as it can. Fewer shared-memory accesses per result (register blocking, warp "
              "shuffles) or wider ones (16-byte) help.",
              (s.ev("l1", "% of peak while active", 100, "%"),
               s.ev("l1_wavefronts_per_request"), s.ev("issue", "", 100, "%")))


DETECTORS: tuple[Detector, ...] = (
    memory_bandwidth, l2_bandwidth, l1_bandwidth, uncoalesced, bank_conflicts, local_memory,
    occupancy, grid_size, tail_effect, launch_overhead, divergence, compute, issue_bound,
    memory_latency, latency_bound, barrier, atomics,
)
