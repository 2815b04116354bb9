"""Turning a re-test, a profile and its diagnosis into the `KernelState` the conductor compares."""

from __future__ import annotations

from typing import Any

from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.measure.records import KernelState
from pragma_ncu.measure.roofline import MEMORY, ComputeRate, shape_fraction
from pragma_ncu.measure.stats import geomean
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.search.results import Retest

# The metrics shown side by side for the best and the candidate (when the profile has them).
KEY_METRICS = (
    "gpu__time_duration.sum",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__inst_executed.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
)
# The same for CPU kernels: perf's events and top-down shares, or cachegrind's simulated counts
# (per kernel call).
CPU_KEY_METRICS = (
    "cycles", "instructions", "IPC", "branch-misses", "cache-misses", "L1-dcache-load-misses",
    "LLC-load-misses", "tma_retiring", "tma_bad_speculation", "tma_frontend_bound",
    "tma_backend_bound", "tma_memory_bound", "tma_core_bound",
    "Ir", "Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw", "I1mr", "Bc", "Bcm",
    "D1_miss_rate", "LL_MPKI", "branch_mispredict_rate",
)
MAX_FINDINGS = 3


def kernel_state(round_: int, variant: str, variant_key: str, source_hash: str,
                 retest: Retest, *, verified: bool, failure: str = "",
                 registers: int | None = None, compute: ComputeRate | None = None
                 ) -> KernelState:
    """The measured part of a state; `with_profile` adds the profile's part. `compute` is the
    device's ceiling for the unit the spec's FLOPs run on (none: memory roofline only)."""
    times = {s.shape: s.median_us for s in retest.shapes}
    noise = {s.shape: s.noise_us for s in retest.shapes}
    ok = verified and retest.status == "ok"
    frac, bound = roofline_fraction(retest, compute)
    point = _roofline_point(retest)
    return KernelState(
        round=round_, variant=variant, variant_key=variant_key, source_hash=source_hash,
        params=dict(retest.point), times_us=times if ok else {}, noise_us=noise if ok else {},
        objective_us=retest.objective if ok else None, verified=ok,
        failure="" if ok else (failure or f"{retest.status}: {retest.message}"),
        ceiling_fraction=frac if ok else None, bound_by=bound if ok else "",
        registers=registers, intensity=point[0] if ok else None,
        flop_rate=point[1] if ok else None)


def _roofline_point(retest: Retest) -> tuple[float | None, float | None]:
    """Where the first tuned shape sits on a roofline chart: (FLOP per byte, FLOP/s); needs
    the spec's FLOPs."""
    s = retest.shapes[0] if retest.shapes else None
    if s is None or not s.flops or not s.gbps or s.median_us <= 0:
        return None, None
    return s.flops / (s.gbps * s.median_us * 1e3), s.flops / (s.median_us * 1e-6)


def roofline_fraction(retest: Retest, compute: ComputeRate | None = None
                      ) -> tuple[float | None, str]:
    """How close to the attainable roofline, and which ceiling sets it: per shape the larger
    of a same-size device copy's time and the FLOPs at the compute ceiling, over the kernel's
    time, as a geometric mean over the shapes (1.0 = at the roofline)."""
    ratios, bindings = [], []
    for s in retest.shapes:
        frac, binding = shape_fraction(s.median_us, s.copy_us, s.flops, compute)
        if frac is None:
            return None, ""
        ratios.append(frac)
        bindings.append((s.median_us * frac, binding))  # the bound's time, and what sets it
    if not ratios:
        return None, ""
    return geomean(ratios), max(bindings)[1]  # named by the shape that takes longest


def with_profile(state: KernelState, kernel: KernelProfile | None, diagnosis: Diagnosis | None,
                 profile_path: str = "", shape: str = "", profiler: str = "",
                 spec_bytes: float | None = None) -> KernelState:
    """`state` with what the profile says; `spec_bytes`, the bytes the spec says the kernel
    moves at the profiled shape, lets the roofline stand on the fewer bytes the kernel was
    measured to move (`moved_fraction`)."""
    if kernel is None or diagnosis is None:
        return state
    metrics = {name: kernel.value(name) for name in (*KEY_METRICS, *CPU_KEY_METRICS)}
    registers = kernel.value("launch__registers_per_thread")
    fraction = state.ceiling_fraction if state.ceiling_fraction is not None \
        else diagnosis.roofline.ceiling_fraction
    return KernelState(**{
        **state.__dict__,
        "metrics": {k: float(v) for k, v in metrics.items() if v is not None},
        "registers": int(registers) if registers is not None else state.registers,
        "classification": diagnosis.classification,
        "findings": tuple(_finding(f) for f in diagnosis.findings[:MAX_FINDINGS]),
        "ceiling_fraction": moved_fraction(fraction, state.bound_by, kernel, spec_bytes),
        "profile_path": profile_path, "profile_shape": shape, "profiler": profiler})


def moved_fraction(fraction: float | None, bound_by: str, kernel: KernelProfile,
                   spec_bytes: float | None) -> float | None:
    """A memory-bound fraction of the roofline on the bytes the kernel moves: where the
    profile measured fewer DRAM bytes than the spec's arrays hold (a gather reads some rows of
    a table; a kernel skips what a mask leaves out), the attainable time is that of the fewer
    bytes, and the fraction shrinks in proportion. More bytes than the spec's (uncoalesced or
    repeated reads) leave it: those are the kernel's to save."""
    read, written = kernel.value("dram__bytes_read.sum"), kernel.value("dram__bytes_write.sum")
    if fraction is None or bound_by not in ("", MEMORY) or read is None or written is None or \
            not spec_bytes or spec_bytes <= 0:
        return fraction
    moved = float(read) + float(written)
    return fraction * moved / spec_bytes if 0 < moved < spec_bytes else fraction


def _finding(f: Any) -> dict[str, Any]:
    return {"bottleneck": f.bottleneck, "title": f.title, "score": f.score,
            "summary": f.summary, "actions": list(f.actions), "ncu_rules": list(f.ncu_rules),
            "evidence": [{"metric": e.metric, "value": e.value, "unit": e.unit,
                          "note": e.note} for e in f.evidence]}


