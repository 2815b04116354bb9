"""One detector per bottleneck class: each reads the signals and returns a scored Finding.

A score estimates the share of the kernel's time the cause accounts for (0..1), so that findings
rank by evidence: a kernel at the DRAM roofline ranks "memory-bandwidth-bound" first even when
ncu's rules estimate large speedups from generic utilization rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pragma_ncu.diagnose import signals as sig
from pragma_ncu.diagnose.model import Evidence, Finding
from pragma_ncu.profile.model import KernelProfile


@dataclass(frozen=True)
class Context:
    """Signals shared by all detectors for one kernel."""

    k: KernelProfile
    stalls: sig.Stalls
    dram_pct: float
    mem_busy: float  # max of DRAM, L2 and L1 throughput, as a fraction
    issue: float  # issue-slot utilization, fraction
    theoretical_occ: float  # fraction
    lanes: float  # average active threads per warp instruction / 32
    global_waste: tuple[float, str, float] | None  # signals.global_waste, read once

    @staticmethod
    def of(k: KernelProfile) -> Context:
        waste = sig.global_waste(k)
        threads = k.first(*sig.THREADS_PER_INST)
        return Context(
            k=k, stalls=sig.stalls(k), dram_pct=sig.pct(k, sig.DRAM_PCT),
            mem_busy=max(sig.pct(k, sig.DRAM_PCT), sig.pct(k, sig.L2_PCT),
                         sig.pct(k, sig.L1_PCT)) / 100,
            issue=sig.pct(k, sig.ISSUE_PCT) / 100,
            theoretical_occ=(k.first(*sig.THEORETICAL_OCC) or 100.0) / 100,
            lanes=(threads / 32) if threads else 1.0, global_waste=waste,
        )

    @property
    def waste(self) -> float:
        """Fraction of global sectors carrying unused bytes."""
        return self.global_waste[0] if self.global_waste else 0.0

    @property
    def local_bytes(self) -> float:
        """Bytes of local-memory (register spill) traffic through L1."""
        return sum(self.k.value(f"l1tex__t_bytes_pipe_lsu_mem_local_op_{op}.sum") or 0.0
                   for op in ("ld", "st"))

    @property
    def local_fraction(self) -> float:
        """Local-memory bytes as a fraction of local + DRAM bytes: how much of the memory
        traffic is the kernel's own spills rather than its data."""
        local = self.local_bytes
        total = local + (sig.dram_bytes(self.k) or 0.0)
        return local / total if total > 0 else 0.0

    def ev(self, metric: str | tuple[str, ...], note: str = "") -> Evidence:
        names = (metric,) if isinstance(metric, str) else metric
        for name in names:
            m = self.k.metrics.get(name)
            if m is not None:
                return Evidence(name, m.value, m.unit, note)
        return Evidence(names[0], "n/a", "", note)


Detector = Callable[[Context], Finding | None]


def memory_bandwidth(c: Context) -> Finding | None:
    if c.dram_pct < 60:
        return None
    at_roof = c.dram_pct >= 80
    title = ("DRAM-bandwidth-bound, at the roofline: little headroom" if at_roof else
             "DRAM-bandwidth-heavy")
    summary = (f"DRAM runs at {c.dram_pct:.0f}% of its peak. "
               + ("Only fewer bytes (fusion, smaller types, reuse through cache) make it faster."
                  if at_roof else "More bytes in flight could push it to the roofline."))
    # Bytes that are wasted sectors or spill traffic are another cause's symptom, not a
    # bandwidth limit of the kernel's data: that share belongs to uncoalesced or spills.
    share = c.dram_pct / 100 * (1 - c.waste) * (1 - c.local_fraction)
    return Finding("memory_bandwidth", title, share, summary,
                   (c.ev(sig.DRAM_PCT, "≥80% is the practical roofline"),
                    c.ev("dram__bytes.sum.per_second")))


def uncoalesced(c: Context) -> Finding | None:
    found = c.global_waste
    if found is None or found[0] < 0.25:
        return None
    waste, metric, used = found
    pressure = max(c.mem_busy, c.stalls.share("long_scoreboard", "lg_throttle"))
    return Finding(
        "uncoalesced_access", "Uncoalesced global memory access", waste * pressure,
        f"Only {used:.0f}% of each 32-byte sector fetched is used: {waste:.0%} of the global "
        "traffic is wasted. Make consecutive threads touch consecutive addresses.",
        (c.ev(metric, "100% = every fetched byte used"),
         c.ev("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
         c.ev("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), c.ev(sig.L2_PCT)))


def bank_conflicts(c: Context) -> Finding | None:
    conflicts = sum(c.k.value(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum")
                    or 0.0 for op in ("ld", "st"))
    wavefronts = sum(c.k.value(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
                     or 0.0 for op in ("ld", "st"))
    if wavefronts <= 0 or conflicts / wavefronts < 0.2:
        return None
    ratio = conflicts / wavefronts
    pressure = max(sig.pct(c.k, sig.L1_PCT) / 100,
                   c.stalls.share("mio_throttle", "short_scoreboard"))
    return Finding(
        "shared_bank_conflicts", "Shared-memory bank conflicts", ratio * pressure,
        f"{ratio:.0%} of shared-memory wavefronts are extra passes caused by bank conflicts. "
        "Pad the shared array (e.g. [32][33]) or swizzle the index.",
        (c.ev("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
         c.ev("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
         c.ev(sig.stall_name("mio_throttle")), c.ev(sig.L1_PCT)))


def occupancy(c: Context) -> Finding | None:
    limiter = sig.occupancy_limiter(c.k)
    if limiter is None or c.theoretical_occ >= 0.5:
        return None
    name, blocks = limiter
    exposure = 1 - max(c.issue, c.mem_busy, _top_pipe(c) / 100)
    what = name.removeprefix("launch__occupancy_limit_").replace("_", " ")
    return Finding(
        sig.LIMITERS[name], f"Occupancy limited by {what}",
        (1 - c.theoretical_occ) * max(exposure, 0.0),
        f"Theoretical occupancy is {c.theoretical_occ:.0%}: {what} allow only {blocks:.0f} "
        "block(s) per SM, too few warps to hide latency.",
        (c.ev(sig.THEORETICAL_OCC), c.ev(name, "the smallest limiter"),
         c.ev("launch__registers_per_thread"), c.ev(sig.ACHIEVED_OCC),
         c.ev("smsp__warps_eligible.avg.per_cycle_active")))


def grid_size(c: Context) -> Finding | None:
    grid, sms = c.k.first(*sig.GRID), c.k.first(*sig.SMS)
    waves = c.k.first(*sig.WAVES)
    if not grid or not sms:
        return None
    if grid < sms:
        return Finding(
            "small_grid", "Too few blocks for the GPU", 1 - grid / sms,
            f"{grid:.0f} blocks for {sms:.0f} SMs: {1 - grid / sms:.0%} of the SMs have no work. "
            "Split the work into more blocks (or use a grid-stride loop over more blocks).",
            (c.ev(sig.GRID), c.ev(sig.SMS), c.ev(sig.WAVES)))
    if waves is not None and waves < 1:
        return Finding("small_grid", "Grid smaller than one wave", (1 - waves) * 0.5,
                       f"The grid fills {waves:.0%} of one wave of resident blocks.",
                       (c.ev(sig.GRID), c.ev(sig.WAVES)))
    return None


def tail_effect(c: Context) -> Finding | None:
    waves = c.k.first(*sig.WAVES)
    if waves is None or waves < 1 or waves > 8:
        return None
    idle = (math.ceil(waves) - waves) / math.ceil(waves)
    if idle < 0.1:
        return None
    return Finding("tail_effect", "Partial last wave (tail effect)", idle * 0.5,
                   f"{waves:.2f} waves: the last one leaves about {idle:.0%} of the SM time idle.",
                   (c.ev(sig.WAVES), c.ev(sig.GRID)))


def divergence(c: Context) -> Finding | None:
    idle = 1 - c.lanes
    if idle < 0.2:
        return None
    return Finding(
        "warp_divergence", "Warp divergence", idle * max(c.issue, 0.3),
        f"An average warp instruction runs {c.lanes * 32:.1f} of 32 lanes: the rest idle in "
        "divergent branches. Make the branch uniform per warp (reorder work by branch).",
        (c.ev(sig.THREADS_PER_INST, "32 = no divergence"),
         c.ev("smsp__sass_average_branch_targets_threads_uniform.pct"), c.ev(sig.ISSUE_PCT)))


def _top_pipe(c: Context) -> float:
    return sig.top_pipe(c.k)[1]


def compute(c: Context) -> Finding | None:
    pipe, busy, bottleneck = sig.top_pipe(c.k)
    if busy < 50 or bottleneck == "memory_latency":
        return None
    names = sig.PIPES[pipe][0]
    return Finding(
        bottleneck, f"Compute-bound on the {pipe} pipe", busy / 100 * c.lanes,
        f"The {pipe} pipe is busy {busy:.0f}% of active cycles. Fewer or cheaper instructions "
        "for the same result (strength reduction, fast-math intrinsics, tensor cores) help.",
        (c.ev(names), c.ev(sig.SM_PCT), c.ev(sig.ISSUE_PCT)))


def memory_latency(c: Context) -> Finding | None:
    share = c.stalls.share("long_scoreboard")
    if share < 0.3 or c.dram_pct >= 70:
        return None
    # Low occupancy or wasted sectors are the root causes when present; so are atomics, whose
    # waits look like load latency.
    score = (share * (1 - c.dram_pct / 100) * math.sqrt(c.theoretical_occ) * (1 - c.waste)
             * (1 - atomic_fraction(c)))
    return Finding(
        "memory_latency", "Memory latency exposed (too few bytes in flight)", score,
        f"{share:.0%} of warp stall cycles wait on global memory (long scoreboard) while DRAM "
        f"runs at {c.dram_pct:.0f}% of peak. Issue more independent loads per thread (wider "
        "vector loads, several rows per thread) so more bytes are in flight.",
        (c.ev(sig.stall_name("long_scoreboard")),
         c.ev("smsp__average_warp_latency_per_inst_issued.ratio"), c.ev(sig.DRAM_PCT),
         c.ev("smsp__warps_eligible.avg.per_cycle_active")))


def barrier(c: Context) -> Finding | None:
    share = c.stalls.share("barrier")
    if share < 0.2:
        return None
    return Finding("barrier_stall", "Warps wait at barriers", share,
                   f"{share:.0%} of stall cycles are warps waiting at __syncthreads: work between "
                   "barriers is unbalanced across warps, or barriers are too frequent.",
                   (c.ev(sig.stall_name("barrier")), c.ev("launch__block_size")))


def atomic_fraction(c: Context) -> float:
    """Atomics and reductions as a fraction of global memory requests."""
    atom = sum(c.k.value(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum") or 0.0
               for op in ("atom", "red"))
    other = sum(c.k.value(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum") or 0.0
                for op in ("ld", "st"))
    return atom / (atom + other) if atom > 0 else 0.0


def atomics(c: Context) -> Finding | None:
    frac = atomic_fraction(c)
    if frac < 0.1:
        return None
    unit = (c.k.value("lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed")
            or 0.0) / 100
    # Contended atomics serialize in one L2 slice: warps wait (memory, drain at exit) while the
    # memory system as a whole is nearly idle. A busy memory system points elsewhere.
    waiting = c.stalls.share("long_scoreboard", "lg_throttle", "membar", "drain")
    score = math.sqrt(frac) * waiting * (1 - c.mem_busy)
    return Finding(
        "atomic_contention", "Atomic operations serialize", score,
        f"{frac:.0%} of global requests are atomics/reductions; warps spend {waiting:.0%} of "
        f"their stall cycles waiting on memory while DRAM runs at {c.dram_pct:.1f}% and the L2 "
        f"atomic units at {unit:.1%}: the updates queue on a few addresses. Aggregate in "
        "registers or shared memory first, then issue one atomic per warp or block.",
        (c.ev("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"),
         c.ev("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"),
         c.ev(sig.stall_name("drain")), c.ev(sig.stall_name("long_scoreboard")),
         c.ev("lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed")))


def spills(c: Context) -> Finding | None:
    local = c.local_bytes
    if local <= 0:
        return None
    return Finding("register_spills", "Registers spill to local memory",
                   min(1.0, c.local_fraction) * 0.8,
                   f"{local / 1e6:.1f} MB of local-memory traffic: spilled registers. Reduce live "
                   "values, unroll less, or allow more registers (__launch_bounds__).",
                   (c.ev("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum"),
                    c.ev("launch__registers_per_thread")))


def launch_overhead(c: Context) -> Finding | None:
    duration = c.k.first(*sig.DURATION)
    if duration is None or duration >= 5000:
        return None
    return Finding("launch_overhead", "Kernel too short: launch and ramp-up dominate",
                   0.5 * (1 - duration / 5000),
                   f"The kernel runs {duration / 1000:.1f} µs; fusing it with neighbours or "
                   "batching launches (CUDA graphs) saves more than tuning it.",
                   (c.ev(sig.DURATION),))


def issue_bound(c: Context) -> Finding | None:
    if c.issue < 0.8 or _top_pipe(c) >= 60:
        return None
    return Finding("instruction_issue", "Instruction-issue-bound", c.issue * 0.7,
                   f"Schedulers issue on {c.issue:.0%} of cycles with no single pipe saturated: "
                   "the kernel executes too many instructions. Remove index arithmetic, use "
                   "vector loads, unroll.",
                   (c.ev(sig.ISSUE_PCT), c.ev("smsp__inst_executed.sum")))


DETECTORS: tuple[Detector, ...] = (
    memory_bandwidth, uncoalesced, bank_conflicts, occupancy, grid_size, tail_effect, divergence,
    compute, memory_latency, barrier, atomics, spills, launch_overhead, issue_bound,
)
