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
from pragma_ncu.backends.cuda.diagnosis.traffic import (
    PRACTICAL_DRAM,
    dram_ceiling_fraction,
    global_waste,
    global_waste_share,
    local_fraction,
    useful_dram_share,
)
from pragma_ncu.diagnose.causality import NEAR_CEILING
from pragma_ncu.diagnose.findings import Evidence, Finding

Detector = Callable[[Signals], Finding | None]

AT_ROOFLINE = 0.90  # of the practical ceiling: what a copy of the same bytes would reach
BUSY = 0.60  # a unit above 60% of its peak is where the time goes, below it latency shows
# ... but it is "the bound" only near its peak (NEAR_CEILING, 80%): between the two it carries
# the time while something else (what the stalls name, where the report has them) holds the rest
WAITING = 0.5  # half the stalls waiting on memory, dependencies or barriers: latency holds it
IDLE_UNEXPLAINED = 0.5  # SMs idle half the time with no small grid, tail or short run to blame
SHORT_NS, FADE_NS = 5_000.0, 10_000.0  # ~2x a launch's own latency; beyond 10 µs it fades out
# No launch is shorter, however little it does: the shortest of every recording (an H200, a
# 2-block fill in tests/fixtures/apps/torch_block: 1.89 µs; the corpus' tiny kernels 2.4 µs)
LAUNCH_FLOOR_NS = 1_888.0
IDEAL_WAVEFRONTS = 4.0  # L1 wavefronts per request of a coalesced 16-byte access (the widest)
SHARED_ONLY_L2 = 0.05  # L2 traffic below 5% of the L1's: the L1 work is shared memory


def _f(bottleneck: str, title: str, score: float, summary: str, evidence: tuple[Evidence, ...]
       ) -> Finding:
    return Finding(bottleneck, title, max(0.0, min(1.0, score)), summary, evidence)


def memory_bandwidth(sig: Signals) -> Finding | None:
    """Busy moving bytes between the SMs and DRAM: DRAM's own load, or the L2's where it only
    carries that traffic and is the busier of the two (stores it absorbs, the crossing between
    L2 partitions): a streaming kernel below the roofline is still memory-bound."""
    dram, ceiling_gbps = sig.val("dram"), sig.ceiling_gbps
    unit, load = sig.memory_traffic()
    if not sig.has("dram") or load < BUSY:
        return None
    frac = dram_ceiling_fraction(sig, ceiling_gbps) or 0.0
    at_roof = frac >= AT_ROOFLINE
    basis = "the measured copy ceiling" if ceiling_gbps and sig.has("dram_bytes") else \
        f"a copy's practical {PRACTICAL_DRAM:.0%} of ncu's DRAM peak"
    title = (f"DRAM-bandwidth-bound, at the roofline ({frac:.0%} of {basis})" if at_roof else
             "Memory-bandwidth-heavy, below the roofline")
    carried = (f" and the L2, which only carries that traffic, at {sig.val('l2'):.0%}"
               if unit == L2_CARRYING else "")
    summary = (f"DRAM runs at {dram:.0%} of its peak{carried}, {frac:.0%} of {basis}. "
               + ("Only fewer bytes (fusion, smaller types, reuse through cache) make it faster."
                  if at_roof else "More bytes in flight (wider loads, several elements per "
                  "thread) could push it to the roofline."))
    return _f("memory_bandwidth", title, load * sig.active * useful_dram_share(sig), summary,
              (sig.ev("dram", f"{frac:.0%} of {basis}", 100, "%"), sig.ev("dram_bytes"),
               *((sig.ev("l2", "carrying DRAM traffic", 100, "%"), sig.ev("l2_reuse"))
                 if unit == L2_CARRYING else ())))


def l2_bandwidth(sig: Signals) -> Finding | None:
    l2, dram = sig.val("l2"), sig.val("dram")
    # L2 carries every DRAM byte too: L2-bound means L2 work beyond the DRAM traffic.
    if not sig.has("l2") or sig.per_active("l2") < BUSY or not sig.l2_serves_its_own():
        return None
    useful = (1 - global_waste_share(sig)) * (1 - local_fraction(sig))
    title = ("L2-bandwidth-bound: data served from L2 at its limit"
             if sig.per_active("l2") >= NEAR_CEILING else
             "L2-bandwidth-heavy, below its peak: data served from L2")
    return _f("l2_bandwidth", title, l2 * useful,
              f"L2 runs at {l2:.0%} of its peak while DRAM runs at {dram:.0%}: the kernel re-reads "
              "data that stays in L2 (or moves local-memory or wasted sector traffic). Reuse it "
              "from registers or shared memory (tiling) so each byte crosses L2 once.",
              (sig.ev("l2", "", 100, "%"), sig.ev("dram", "", 100, "%")))


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


def uncoalesced(sig: Signals) -> Finding | None:
    found = global_waste(sig)
    if found is not None:
        waste, metric, used = found
        if waste < 0.25:  # below a quarter wasted, the access is near the width's ideal
            return None
        # The waste is a share of the global traffic only; local traffic is another cause's.
        return _f("uncoalesced_access", "Uncoalesced global memory access",
                  waste * (1 - local_fraction(sig)) * _memory_pressure(sig) * sig.active,
                  f"Only {used:.1f} of each 32-byte sector fetched is used: {waste:.0%} of the "
                  "global traffic is wasted. Make consecutive threads touch consecutive "
                  "addresses.",
                  (Evidence(metric, round(used, 2), "byte/sector", "32 = every byte used"),
                   sig.ev("global_excess_sectors"), sig.ev("global_ld_sectors"),
                   sig.ev("l2", "", 100, "%")))
    excess = _wavefront_excess(sig)
    if excess is None or excess < 0.5 or _shared_only(sig):
        return None
    return _f("uncoalesced_access", "Memory access pattern: L1 serves many wavefronts per "
              "request (uncoalesced access likely)", excess * _memory_pressure(sig) * sig.active,
              f"The L1 data pipe processes {sig.val('l1_wavefronts_per_request'):.1f} wavefronts "
              f"per request (a coalesced 16-byte access needs at most {IDEAL_WAVEFRONTS:.0f}) "
              "while global traffic reaches L2: accesses of a warp are scattered over many "
              "sectors. This collection has no sector counts; shared-memory bank conflicts "
              "would look alike (see what was not assessed).",
              (sig.ev("l1_wavefronts_per_request", f"ideal <= {IDEAL_WAVEFRONTS:.0f}"),
               sig.ev("l1", "", 100, "%"), sig.ev("l2", "", 100, "%")))


def bank_conflicts(sig: Signals) -> Finding | None:
    excess, wavefronts = sig.get("shared_excess"), sig.get("shared_wavefronts")
    if excess is not None and wavefronts:
        ratio = excess / wavefronts
        if ratio < 0.2:  # a fifth of extra passes is where conflicts start to cost
            return None
        pressure = max(sig.val("l1"), sig.stall_share("mio_throttle", "short_scoreboard"))
        return _f("shared_bank_conflicts", "Shared-memory bank conflicts",
                  ratio * pressure * sig.active,
                  f"{ratio:.0%} of shared-memory wavefronts are extra passes caused by bank "
                  "conflicts. Pad the shared array (e.g. [32][33]) or swizzle the index.",
                  (sig.ev("shared_excess"), sig.ev("shared_wavefronts"),
                   sig.stall_ev("mio_throttle"), sig.ev("l1", "", 100, "%")))
    wf_excess = _wavefront_excess(sig)
    if excess is not None or wf_excess is None or wf_excess < 0.5 or not _shared_only(sig):
        return None
    return _f("shared_bank_conflicts", "Memory access pattern: shared-memory wavefronts "
              "(bank conflicts likely)", wf_excess * sig.val("l1") * sig.active,
              f"The L1 data pipe processes {sig.val('l1_wavefronts_per_request'):.1f} wavefronts "
              "per request while L2 sees almost no traffic: the L1 work is shared memory, "
              "serialized into many passes.",
              (sig.ev("l1_wavefronts_per_request", f"ideal <= {IDEAL_WAVEFRONTS:.0f}"),
               sig.ev("l1", "", 100, "%"), sig.ev("l2", "", 100, "%")))


SCATTERED_LOCAL = 8.0  # sectors per local request: spills touch one slot per warp (4 sectors)


def spill_share(sig: Signals) -> tuple[float | None, str]:
    """(share of local traffic that is register spilling, how it was told): from the spill
    instruction counts, else the build's ptxas report (spill bytes against the stack frame),
    else the access pattern (lanes scattered over their own slots are not spills); None when
    nothing tells."""
    spills, local = sig.get("spill_instructions"), sig.get("local_instructions")
    if spills is not None and local:
        return min(1.0, spills / local), sig.readings["spill_instructions"].metric
    res = sig.resources
    if res.get("stack") or res.get("spill_stores"):
        spilled = res.get("spill_stores", 0.0) + res.get("spill_loads", 0.0)
        return (1.0 if spilled >= res.get("stack", 0.0) else 0.0), "ptxas spill and stack bytes"
    per_request = sig.get("local_sectors_per_request")
    if per_request is not None and per_request > SCATTERED_LOCAL:
        return 0.0, "local sectors per request (lanes scattered over their own slots)"
    return None, ""


def local_memory(sig: Signals) -> Finding | None:
    frac = local_fraction(sig)
    if frac < 0.1:  # a tenth of the traffic: below that, local memory is a side note
        return None
    pressure = _memory_pressure(sig)
    share, told = spill_share(sig)
    evidence = (sig.ev("local_bytes"), sig.ev("local_instructions"), sig.ev("spill_instructions"),
                sig.ev("local_sectors_per_request", "4 = one slot per warp, as spills"),
                sig.ev("registers"))
    if share is None or share >= 0.5:  # spills are the usual source when nothing tells
        how = (f"{share:.0%} of it register spills ({told})" if share is not None else
               "most likely register spills; `nvcc -Xptxas -v` tells spills from stack arrays")
        return _f("register_spills", "Registers spill to local memory",
                  frac * pressure * sig.active,
                  f"{frac:.0%} of the memory traffic at L1 is local memory, {how}. Reduce live "
                  "values, unroll less, or allow more registers (__launch_bounds__ with fewer "
                  "blocks, a higher -maxrregcount).", evidence)
    return _f("local_memory", "Per-thread arrays in local memory", frac * pressure * sig.active,
              f"{frac:.0%} of the memory traffic at L1 is local memory, and it is not spilling "
              f"({told}): a per-thread array indexed by a run-time value cannot live in "
              "registers. Index it with compile-time constants (full unroll), or keep it in "
              "shared memory.", evidence)


def occupancy(sig: Signals) -> Finding | None:
    limiter = occupancy_limiter(sig.k)
    theoretical = sig.get("theoretical_occupancy")
    if limiter is None or theoretical is None or theoretical >= 0.999:
        return None
    name, blocks = limiter
    deficit = 1 - theoretical
    small_blocks = name == "launch__occupancy_limit_blocks" and sig.val("block", 1024) <= 64
    if small_blocks and sig.has("achieved_occupancy"):  # tiny blocks also starve the scheduler
        deficit = max(deficit, 1 - sig.val("achieved_occupancy"))
    what = name.removeprefix("launch__occupancy_limit_").replace("_", " ")
    return _f(LIMITERS[name], f"Occupancy limited by {what}",
              deficit * sig.exposure * sig.active,
              f"Theoretical occupancy is {theoretical:.0%}: {what} allow only {blocks:.0f} "
              f"block(s) per SM, and with nothing busy ({sig.busiest()[0]} at "
              f"{sig.busiest()[1]:.0%}) too few warps hide the latency.",
              (sig.ev("theoretical_occupancy", "", 100, "%"),
               sig.ev_metric(name, "the smallest limit"), sig.ev("registers"),
               sig.ev("achieved_occupancy", "", 100, "%"), sig.ev("block")))


def grid_size(sig: Signals) -> Finding | None:
    grid, sms = sig.get("grid"), sig.get("sms")
    if not grid or not sms or grid >= sms:
        return None
    idle = 1 - grid / sms
    return _f("small_grid", "Too few blocks for the GPU", idle,
              f"{grid:.0f} blocks for {sms:.0f} SMs: {idle:.0%} of the SMs have no work. Split "
              "the work into more blocks (or use a grid-stride loop over more blocks).",
              (sig.ev("grid"), sig.ev("sms"), sig.ev("sm_active", "fraction of time SMs had work")))


def tail_effect(sig: Signals) -> Finding | None:
    waves = sig.get("waves")
    if waves is None or waves <= 1 or waves > 8:  # past 8 waves a partial one costs < 6%
        return uneven_blocks(sig)
    full = math.ceil(waves)
    predicted = (full - waves) / full
    measured = 1 - sig.active if sig.has("sm_active") else None
    idle = min(predicted, measured) if measured is not None else predicted * 0.5
    if idle < 0.1:
        return uneven_blocks(sig)
    return _f("tail_effect", "Partial last wave (tail effect)", idle,
              f"{waves:.2f} waves of blocks: the last wave keeps only part of the SMs busy, and "
              f"the SMs idle for about {idle:.0%} of the time. Size the grid to whole waves, or "
              "use smaller blocks so the last wave is thinner.",
              (sig.ev("waves"), sig.ev("grid"),
               sig.ev("sm_active", "fraction of time SMs had work")))


def uneven_blocks(sig: Signals) -> Finding | None:
    """The SMs idle most of the time though the grid fills them, the kernel is long enough to
    ramp up and no partial wave explains it: a few blocks run long after the others finished
    (the tail of uneven work, not of the wave count)."""
    if not sig.has("sm_active") or 1 - sig.active < IDLE_UNEXPLAINED:
        return None
    grid, sms, duration = sig.get("grid"), sig.get("sms"), sig.get("duration_ns")
    if (grid and sms and grid < sms) or (duration is not None and duration < FADE_NS):
        return None  # a small grid or a short kernel is the reason: their findings say it
    idle = 1 - sig.active
    return _f("tail_effect", "SMs idle most of the time: the blocks' work is uneven", idle,
              f"The SMs have work {sig.active:.0%} of the time although the grid has "
              f"{grid or 0:.0f} blocks: a few blocks run long after the others finished. Split "
              "the long blocks' work, or give each block an even share (ncu's "
              "WorkloadDistribution section shows which SMs idle).",
              (sig.ev("sm_active", "fraction of time SMs had work"), sig.ev("grid"),
               sig.ev("sms")))


def launch_overhead(sig: Signals) -> Finding | None:
    duration = sig.get("duration_ns")
    if duration is None or duration >= FADE_NS:
        return None
    fade = 1.0 if duration <= SHORT_NS else (FADE_NS - duration) / (FADE_NS - SHORT_NS)
    share = max(0.5, 1 - sig.active) * fade
    return _f("launch_overhead", "Kernel too short: launch and ramp-up dominate", share,
              f"The kernel runs {duration / 1000:.1f} µs, about as long as launching it; the SMs "
              f"are busy {sig.active:.0%} of that. Fusing it with its neighbours or batching "
              "launches (CUDA graphs) saves more than tuning it.",
              (sig.ev("duration_ns"), sig.ev("sm_active", "fraction of time SMs had work")))


def divergence(sig: Signals) -> Finding | None:
    idle = 1 - sig.lanes
    if not sig.has("lanes") or idle < 0.2:  # a fifth of lanes idle: branch structure matters
        return None
    return _f("warp_divergence", "Warp divergence", idle * sig.val("issue", 0.5) * sig.active,
              f"An average warp instruction runs {sig.lanes * 32:.1f} of 32 lanes: the rest idle "
              "in divergent branches. Make the branch uniform per warp (reorder work by "
              "branch).",
              (sig.ev("lanes", "32 = no divergence"),
               sig.ev_metric("smsp__sass_average_branch_targets_threads_uniform.pct"),
               sig.ev("issue", "", 100, "%")))


def compute(sig: Signals) -> Finding | None:
    pipe, busy = sig.top_pipe()
    if not pipe or busy < 0.5:  # half the pipe's peak: below that another limit dominates
        return None
    bottleneck = PIPES[pipe]
    at_roof = busy >= AT_ROOFLINE and sig.lanes >= 0.9
    title = (f"Compute-bound on the {pipe} pipe" + (", at the roofline" if at_roof else "")
             if busy >= NEAR_CEILING else f"Compute-heavy on the {pipe} pipe, below its peak")
    return _f(bottleneck, title, busy * sig.lanes * sig.active,
              f"The {pipe} pipe is busy {busy:.0%} of the active cycles. "
              + ("It runs near its peak: only fewer or cheaper instructions for the same result "
                 "(strength reduction, fast-math intrinsics, tensor cores) help." if at_roof else
                 "Fewer or cheaper instructions for the same result help, or more independent "
                 "work per thread to fill the pipe."),
              (sig.ev(f"pipe_{pipe}", "% of peak while active", 100, "%"),
               sig.ev("issue", "", 100, "%"), sig.ev("sm", "", 100, "%")))


def issue_bound(sig: Signals) -> Finding | None:
    """The SM side carries the time with no pipe busy: the schedulers issue on most active
    cycles (or ncu's SM throughput, the busiest of the SM's sub-units, is high). Near the peak
    the kernel is issue-bound; between BUSY and the peak it is busy but not saturated, and the
    stalls (where the report has them) say what holds the rest."""
    issue, sm = sig.get("issue"), sig.per_active("sm") if sig.has("sm") else None
    level = max((v for v in (issue, sm) if v is not None), default=0.0)
    pipe, busy = sig.top_pipe()
    if level < BUSY or busy >= BUSY or max(sig.val("l1"), sig.val("pipe_LSU")) >= level:
        return None  # a pipe, or the L1 side, is the busier: its own finding speaks for it
    evidence = (sig.ev("issue", "", 100, "%"), sig.ev("sm", "", 100, "%"),
                sig.ev_metric("smsp__inst_executed.sum"))
    if (issue or 0.0) >= NEAR_CEILING:
        return _f("instruction_issue", "Instruction-issue-bound", level * sig.active,
                  f"Schedulers issue on {issue:.0%} of active cycles with no single pipe "
                  "saturated: the kernel executes too many instructions. Remove index "
                  "arithmetic, use vector loads, unroll.", evidence)
    top = sig.stalls.top(1) if sig.stalls else []
    rest = (f"Warps stall mostly on {top[0][0].replace('_', ' ')}." if top else
            "This collection has no warp-state statistics to say what holds the rest (see "
            "what was not assessed).")
    shown = ", ".join(f"{name} {value:.0%}" for name, value in
                      (("issue slots", issue), ("SM throughput", sm)) if value is not None)
    near = level >= NEAR_CEILING  # ncu's SM throughput near its peak, the issue rate not
    return _f("instruction_issue", (f"SM-bound ({shown}), no pipe saturated" if near else
                                    f"SM side busy below its peak ({shown})"),
              level * sig.active,
              f"The SM side carries the time ({shown} while the SMs are active) with no pipe "
              f"near its peak (busiest: {pipe or 'none collected'} at {busy:.0%})"
              + ("." if near else f", yet below the rate the SM sustains. {rest}")
              + " Fewer instructions per element (index arithmetic, vector loads, unrolling) "
              "shorten it either way.", evidence)


def memory_latency(sig: Signals) -> Finding | None:
    share = sig.stall_share("long_scoreboard")
    if sig.stalls is None or share < 0.3:  # under 30% of stalls the wait is not mainly memory
        return None
    return _f("memory_latency", "Memory latency exposed (too few bytes in flight)",
              share * sig.exposure * sig.active,
              f"{share:.0%} of warp stalls wait on global or local memory (long scoreboard) while "
              f"nothing is busy (the busiest unit, {sig.busiest()[0]}, at {sig.busiest()[1]:.0%}). "
              "Issue more independent loads per thread (wider vector loads, several rows per "
              "thread) so more bytes are in flight.",
              (sig.stall_ev("long_scoreboard"), sig.ev("dram", "", 100, "%"),
               sig.ev("l2", "", 100, "%"), sig.ev("achieved_occupancy", "", 100, "%")))


def latency_bound(sig: Signals) -> Finding | None:
    """No unit busy: warps wait. Where the stalls say they mostly wait (on memory, a
    dependency, a barrier), a unit busy below its peak does not carry the time either."""
    if not (sig.has("sm") and (sig.has("dram") or sig.has("l1"))):
        return None  # without the speed-of-light figures idleness cannot be told
    waits = sig.stalls.waiting if sig.stalls else 0.0
    if sig.exposure < (1 - NEAR_CEILING if waits >= WAITING else 1 - BUSY):
        return None
    unit, busy = sig.busiest()
    top = sig.stalls.top(1) if sig.stalls else []
    why = (f"Warps mostly stall on {top[0][0].replace('_', ' ')}." if top else
           "This collection has no warp-state statistics to say what the warps wait for.")
    title = ("Latency-bound: no unit is busy" if busy < BUSY else
             f"Latency-bound: warps wait, {unit} below its peak")
    return _f("latency_bound", title, 0.9 * sig.exposure * sig.active,
              f"The busiest unit ({unit}) runs at {busy:.0%} of its peak while the SMs are "
              f"active: warps wait rather than work. {why}",
              (sig.ev("sm", "", 100, "%"), sig.ev("dram", "", 100, "%"), sig.ev("l1", "", 100, "%"),
               sig.ev("achieved_occupancy", "", 100, "%")))


def barrier(sig: Signals) -> Finding | None:
    share = sig.stall_share("barrier")
    if share < 0.2:  # a fifth of stalls at barriers: the block's warps are out of step
        return None
    return _f("barrier_stall", "Warps wait at barriers", share * sig.exposure * sig.active,
              f"{share:.0%} of stalls are warps waiting at __syncthreads: work between barriers "
              "is unbalanced across warps, or barriers are too frequent.",
              (sig.stall_ev("barrier"), sig.ev("block"), sig.ev("issue", "", 100, "%")))


def atomics(sig: Signals) -> Finding | None:
    """Atomics serialize when many updates hit few addresses: seen as atomics and reductions
    making up a good part of the global requests, or as one L2 slice's atomic unit busy while
    the others idle (ncu's default set carries the per-slice maximum)."""
    requests, atomic = sig.get("memory_requests"), sig.get("atomic_requests")
    frac = atomic / (atomic + requests) if atomic and requests is not None else 0.0
    hot, avg = sig.get("l2_atomic_busiest"), sig.val("l2_atomic_average")
    hot_slice = hot is not None and hot >= 0.3 and hot >= 10 * avg  # one slice does the work
    if frac < 0.1 and not hot_slice:  # a tenth of requests: below that atomics are incidental
        return None
    waiting = sig.stall_share("long_scoreboard", "lg_throttle", "membar", "drain")
    strength = 1.0 if hot_slice else math.sqrt(frac) * max(waiting, 0.3)
    where = (f"the busiest L2 slice's atomic unit runs at {hot:.0%} while the average slice "
             f"runs at {avg:.1%}" if hot_slice and hot is not None else
             f"{frac:.0%} of global requests are atomics or reductions")
    return _f("atomic_contention", "Atomic operations serialize",
              strength * sig.exposure * sig.active,
              f"{where.capitalize()}, and nothing else is busy (busiest unit {sig.busiest()[0]} "
              f"at {sig.busiest()[1]:.0%}): updates to a few addresses queue in one place. "
              "Aggregate in registers or shared memory first, then one atomic per warp or block.",
              (sig.ev("l2_atomic_busiest", "busiest L2 slice", 100, "%"),
               sig.ev("l2_atomic_average", "average slice", 100, "%"), sig.ev("atomic_requests"),
               sig.ev("memory_requests"), sig.stall_ev("long_scoreboard")))


def l1_bandwidth(sig: Signals) -> Finding | None:
    l1 = sig.get("l1")
    if l1 is None or l1 < BUSY:
        return None
    title = ("L1/shared-memory-bandwidth-bound" if l1 >= NEAR_CEILING else
             "L1/shared-memory-heavy, below its peak")
    return _f("l1_bandwidth", title, l1 * sig.active,
              f"The L1/TEX unit (shared memory, and global or local accesses through L1) is busy "
              f"{l1:.0%} of the active cycles: the kernel moves data between L1 and the SM as "
              "fast as it can. Fewer shared-memory accesses per result (register blocking, warp "
              "shuffles) or wider ones (16-byte) help.",
              (sig.ev("l1", "% of peak while active", 100, "%"),
               sig.ev("l1_wavefronts_per_request"), sig.ev("issue", "", 100, "%")))


DETECTORS: tuple[Detector, ...] = (
    memory_bandwidth, l2_bandwidth, l1_bandwidth, uncoalesced, bank_conflicts, local_memory,
    occupancy, grid_size, tail_effect, launch_overhead, divergence, compute, issue_bound,
    memory_latency, latency_bound, barrier, atomics,
)
