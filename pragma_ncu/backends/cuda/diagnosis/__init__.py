"""The CUDA target's diagnosis rules, for profiles ncu collected: one kernel's metrics -> a
Diagnosis with ranked findings (the detectors, over the signals read once from the quantities
the report carries), each citing the compendium entries of the metrics it rests on, ncu's own
rule results beside them, and what the collection could not assess (coverage)."""

from __future__ import annotations

from dataclasses import replace

from pragma_ncu.backends.cuda.diagnosis import coverage
from pragma_ncu.backends.cuda.diagnosis.detectors import AT_ROOFLINE, DETECTORS, LAUNCH_FLOOR_NS
from pragma_ncu.backends.cuda.diagnosis.signals import L2_CARRYING, PIPES, Signals
from pragma_ncu.backends.cuda.diagnosis.traffic import (
    PRACTICAL_DRAM,
    dram_ceiling_fraction,
    useful_dram_share,
)
from pragma_ncu.diagnose import causality
from pragma_ncu.diagnose.cite import Knowledge, actions_for, cite, hot_lines
from pragma_ncu.diagnose.findings import Diagnosis, Finding, LowerPrecision, Roofline
from pragma_ncu.knowledge.schema import GpuSpec
from pragma_ncu.measure.roofline import COMPUTE_KINDS, attainable
from pragma_ncu.profile.kernel_names import GEMM_LIKE, family
from pragma_ncu.profile.profiles import KernelProfile, RuleResult

# ncu rule identifiers -> the bottleneck classes they speak to.
RULE_CLASSES: dict[str, tuple[str, ...]] = {
    "UncoalescedGlobalAccess": ("uncoalesced_access",),
    "UncoalescedSharedAccess": ("shared_bank_conflicts",),
    "SharedMemoryConflicts": ("shared_bank_conflicts",),
    "SharedBankConflicts": ("shared_bank_conflicts",),
    "TheoreticalOccupancy": ("occupancy_registers", "occupancy_shared", "occupancy_block",
                             "register_spills", "local_memory"),
    "MemoryCacheAccessPattern": ("uncoalesced_access", "register_spills", "local_memory"),
    "WorkloadImbalance": ("atomic_contention", "small_grid", "tail_effect"),
    "AchievedOccupancy": ("occupancy_registers", "occupancy_shared", "occupancy_block",
                          "tail_effect", "small_grid"),
    "LaunchConfiguration": ("small_grid", "tail_effect"),
    "ThreadDivergence": ("warp_divergence",),
    "HighPipeUtilization": ("compute_fma", "compute_sfu", "compute_fp64", "tensor_core"),
    "CPIStall": ("memory_latency", "barrier_stall", "shared_bank_conflicts",
                 "atomic_contention", "latency_bound", "register_spills", "local_memory"),
    "IssueSlotUtilization": ("memory_latency", "instruction_issue", "latency_bound"),
    "SOLBottleneck": ("memory_bandwidth", "l2_bandwidth", "memory_latency", "latency_bound"),
    "MemoryL2Compression": (),
}
MIN_SCORE = 0.02
# The findings that name what warps wait on: where the stalls back them, they explain a limit
# below its peak (causality.rank's `waiting`).
WAITS = ("memory_latency", "barrier_stall", "latency_bound")


def diagnose(kernel: KernelProfile, knowledge: Knowledge, ceiling_gbps: float | None = None,
             source_file: str | None = None,
             resources: dict[str, float] | None = None,
             compute: dict[str, float] | None = None) -> Diagnosis:
    """Rank the causes of lost time for one kernel profiled by ncu, from whatever collection
    the report is (a user's default set, a full set, a few sections, our own collection).

    `ceiling_gbps` is the device's measured copy ceiling (else a practical fraction of ncu's
    DRAM peak is the roofline); `resources` the build's ptxas report (spill and stack bytes),
    which `pragma-ncu profile` records and a user's report lacks; `compute` the device's
    measured compute ceilings (ComputeCeiling.per_second), for the attainable roofline."""
    s = Signals.of(kernel, resources, ceiling_gbps)
    found = [f for f in (detect(s) for detect in DETECTORS) if f and f.score >= MIN_SCORE]
    ranked = causality.rank(found, _limit_levels(s), WAITS if s.stalls is not None else ())
    findings = tuple(_with_actions(f, knowledge, kernel.rules) for f in ranked)
    metrics = [e.metric for f in findings for e in f.evidence] + _roofline_metrics()
    citations, uncited = cite(metrics, knowledge)
    missing = coverage.gaps(s)
    roofline = replace(roofline_of(s, compute), lower_precision=lower_precision(kernel, s,
                                                                                knowledge))
    return Diagnosis(
        kernel=kernel.name, classification=findings[0].bottleneck if findings else "none",
        roofline=roofline, findings=findings,
        guidance=ranked_guidance(kernel.rules), hotspots=hot_lines(kernel.hotspots, source_file),
        citations=citations, uncited=uncited, not_assessed=missing,
        collect_command=coverage.collect_command(kernel.name, missing),
        hotspot_counts="warp-state samples",
    )


def _limit_levels(s: Signals) -> dict[str, float]:
    """Each limit's unit utilization while the SMs are active (for causality.rank)."""
    pipe, busy = s.top_pipe()
    levels = {"memory_bandwidth": s.memory_traffic()[1], "l2_bandwidth": s.per_active("l2"),
              "l1_bandwidth": s.val("l1"),
              "instruction_issue": s.val("issue")}
    if pipe:
        levels[PIPES[pipe]] = busy
    return levels


def _with_actions(f: Finding, knowledge: Knowledge, rules: tuple[RuleResult, ...]) -> Finding:
    matching = tuple(dict.fromkeys(r.rule for r in rules
                                   if f.bottleneck in RULE_CLASSES.get(r.rule, ())
                                   and r.kind in ("OPT", "WRN")))
    return Finding(f.bottleneck, f.title, round(f.score, 4), f.summary, f.evidence,
                   actions_for(f.bottleneck, knowledge), matching)


def roofline_of(sig: Signals, compute: dict[str, float] | None = None) -> Roofline:
    """Where the kernel sits: achieved DRAM bandwidth against the copy ceiling, the busiest
    unit, and whether that unit runs at its practical ceiling."""
    duration, dram = sig.get("duration_ns"), sig.get("dram_bytes")
    achieved = dram / duration if dram is not None and duration else None  # bytes/ns = GB/s
    dram_pct = 100 * sig.val("dram") if sig.has("dram") else None
    ceiling, source = sig.ceiling_gbps, "measured copy" if sig.ceiling_gbps else ""
    if not ceiling and achieved and dram_pct:
        ceiling, source = achieved / (dram_pct / 100), "ncu DRAM peak"
    pipe, busy = sig.top_pipe()
    binding, level = sig.busiest()
    if binding == L2_CARRYING:
        binding = "DRAM"  # the L2 only carries DRAM's traffic: the roof is DRAM's
    # At the roofline: DRAM at the copy ceiling, or a compute pipe near its peak. A saturated
    # L1 or L2 is not a roofline: it is usually extra traffic (waste, re-reads) to remove.
    if binding == "DRAM":
        at_roof = (dram_ceiling_fraction(sig, sig.ceiling_gbps) or 0.0) >= AT_ROOFLINE
    else:
        at_roof = level >= AT_ROOFLINE and binding in PIPES
    flops = counted_flops(sig)
    kind = max(flops, key=lambda k: flops[k] / (compute or {}).get(COMPUTE_KINDS[k][0], 1.0),
               default="fp32")
    # With FLOPs but no measured compute ceiling the roofline would be the memory side alone,
    # which says nothing of a compute-bound kernel: leave it unknown then.
    # The attainable roofline stands on measured ceilings only (ncu's DRAM peak is no copy).
    known = not flops or bool(compute and compute.get(COMPUTE_KINDS[kind][0]))
    needed = dram * useful_dram_share(sig) if dram is not None else None  # bytes the work needs
    bound = attainable(needed, flops.get(kind), kind, sig.ceiling_gbps, compute) if known else None
    total = sum(flops.values()) or None
    measured = bound.fraction(duration / 1e3) if bound and duration else None
    reached, reached_by = attainable_fraction(sig, measured, bound.binding if bound else "")
    return Roofline(duration, dram, achieved, dram_pct, ceiling, source,
                    100 * sig.val("sm") if sig.has("sm") else None, pipe,
                    100 * busy if pipe else None, binding, round(100 * level, 2), at_roof,
                    total, total / duration * 1e9 if total and duration else None,
                    COMPUTE_KINDS[kind][1] if flops else "",
                    (compute or {}).get(COMPUTE_KINDS[kind][0]) if flops else None,
                    measured, bound.binding if bound else "", reached, reached_by)


def attainable_fraction(sig: Signals, measured: float | None = None, measured_by: str = ""
                        ) -> tuple[float | None, str]:
    """(time the kernel cannot beat doing the same work / its duration, the ceiling that sets
    it). Each ceiling the report can judge by gives a time the work needs at least, and the
    largest binds: the attainable roofline on measured ceilings (`measured`), the DRAM traffic
    the work needs (unused sector bytes and local traffic left out, where the report counts
    them) at the practical copy ceiling, and the busiest compute pipe's work at its peak (over the
    SMs' active share of the time, lanes that do work only, where the report counts them), which
    stands in for the FLOPs a default set does not count; and however little a launch does, it
    takes LAUNCH_FLOOR_NS. L1, L2 and issue slots are no roof: their saturation is usually
    traffic or instructions to remove."""
    found: list[tuple[float, str]] = []
    if measured is not None:
        found.append((measured, f"{measured_by} at the measured ceilings"))
    dram = dram_ceiling_fraction(sig, sig.ceiling_gbps)
    if dram is not None:
        found.append((dram * useful_dram_share(sig), "DRAM traffic at the " + (
            "measured copy ceiling" if sig.ceiling_gbps and sig.has("dram_bytes") else
            f"practical copy ceiling ({PRACTICAL_DRAM:.0%} of ncu's DRAM peak)")))
    pipe, busy = sig.top_pipe()
    if pipe:
        found.append((busy * sig.active * sig.lanes, f"the {pipe} pipe's work at its peak"))
    duration = sig.get("duration_ns")
    if not found or not duration:
        return None, ""
    found.append((LAUNCH_FLOOR_NS / duration, "the shortest a launch takes"))
    fraction, by = max(found)
    return min(1.0, fraction), by


# Lower precision for an FP32 GEMM-like kernel on the SIMT pipes: the tensor-core units whose
# datasheet rates set the figure, and what makes a kernel one (the FMA pipe its busiest, busy
# at least MIN_FMA_BUSY of the active time; the tensor pipe idle, below TENSOR_IDLE).
LOWER_PRECISION = (("tf32_tensor_tflops", "TF32 tensor cores"),
                   ("bf16_tensor_tflops", "BF16 tensor cores"))
MIN_FMA_BUSY = 0.4
TENSOR_IDLE = 0.05


def lower_precision(kernel: KernelProfile, sig: Signals, knowledge: Knowledge
                    ) -> tuple[LowerPrecision, ...]:
    """The ceiling of the same math on tensor cores at a lower precision, for an FP32
    GEMM-like kernel on the SIMT pipes: its FP32 work (counted FLOPs, else the FMA pipe's work
    at its peak) at each unit's datasheet rate, never less than its DRAM traffic at the
    practical copy ceiling nor a launch. GEMM-like is what its name says (GEMM, matmul,
    convolution: pragma_ncu.profile.kernel_names): many FLOPs per byte do not make one (a
    polynomial per element has them, and no tensor core runs it). () for any other kernel,
    or a GPU not in the datasheets."""
    pipe, busy = sig.top_pipe()
    duration = sig.get("duration_ns")
    if pipe != "FMA" or busy < MIN_FMA_BUSY or sig.val("pipe_Tensor") >= TENSOR_IDLE \
            or not duration or family(kernel.name) not in GEMM_LIKE:
        return ()
    flops = sig.val("flops_fp32")
    spec = _datasheet(kernel, knowledge)
    fp32 = float(spec.values.get("fp32_tflops", 0)) if spec else 0.0
    if spec is None or fp32 <= 0:
        return ()
    work_ns = flops / fp32 / 1e3 if flops else busy * sig.active * sig.lanes * duration
    fraction = dram_ceiling_fraction(sig, sig.ceiling_gbps)
    memory_ns = fraction * useful_dram_share(sig) * duration if fraction is not None else 0.0
    out = []
    for key, unit in LOWER_PRECISION:
        rate = float(spec.values.get(key, 0))
        if rate > fp32:
            time_ns = max(work_ns * fp32 / rate, memory_ns, LAUNCH_FLOOR_NS)
            out.append(LowerPrecision(unit, time_ns, duration / time_ns, rate / fp32,
                                      spec.name))
    return tuple(out)


def _datasheet(kernel: KernelProfile, knowledge: Knowledge) -> GpuSpec | None:
    """The datasheet of the GPU the kernel ran on: by its name, else its architecture."""
    name = kernel.metrics.get("device__attribute_display_name")
    if name is not None and isinstance(name.value, str) and (spec := knowledge.gpu(name.value)):
        return spec
    major = kernel.value("device__attribute_compute_capability_major")
    minor = kernel.value("device__attribute_compute_capability_minor")
    return knowledge.gpu(f"{major:.0f}.{minor:.0f}") if major is not None and minor is not None \
        else None


TENSOR_FLOP_PER_HMMA = 2 * 16 * 8 * 16  # one HMMA.16816 (sm_80+); wmma 16x16x16 issues two


def counted_flops(sig: Signals) -> dict[str, float]:
    """FLOPs by kind that ncu counted (FP32, FP64 from per-thread instructions; tensor cores
    estimated from HMMA instructions), for kinds with any."""
    out = {"fp32": sig.val("flops_fp32"), "fp64": sig.val("flops_fp64"),
           "fp16_tensor": sig.val("hmma_instructions") * TENSOR_FLOP_PER_HMMA}
    return {k: v for k, v in out.items() if v > 0}


def _roofline_metrics() -> list[str]:
    return ["gpu__time_duration.sum", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"]


def ranked_guidance(rules: tuple[RuleResult, ...]) -> tuple[RuleResult, ...]:
    """ncu's optimization advice (OPT/WRN), by its estimated speedup; shown beside, not as,
    the ranking."""
    advice = [r for r in rules if r.kind in ("OPT", "WRN", "ERR")]
    return tuple(sorted(advice, key=lambda r: -(r.speedup if r.speedup is not None else -1)))
