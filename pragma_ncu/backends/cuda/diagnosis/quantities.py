"""The quantities a diagnosis reads, each from whichever metrics a report carries.

A report may come from ncu's default set, `--set full`, a few `--section`s, our own collection,
a CSV page, or an older ncu that named things differently. Each quantity therefore lists its
*sources* in order of preference: the first source whose metrics are all present gives the
value, and the `Reading` it returns names the metric (or formula) actually used, so evidence
can say where a number came from. `QUANTITIES` is the one table of those preferences; the
documentation (docs/profiler.md) and the coverage notes are generated from it.

Units are ncu's base units (readers convert display units). Fractions are 0..1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pragma_ncu.profile.profiles import KernelProfile


@dataclass(frozen=True)
class Reading:
    """A quantity's value and the metric (or formula over metrics) it was read from."""

    value: float
    metric: str
    unit: str = ""


@dataclass(frozen=True)
class Source:
    """One way to read a quantity: `read` returns None when the report lacks its metrics."""

    label: str  # the metric, or a formula over metrics, as documentation shows it
    read: Callable[[KernelProfile], Reading | None]


def metric(name: str, scale: float = 1.0, unit: str = "") -> Source:
    """The metric's value times `scale`."""
    def read(k: KernelProfile) -> Reading | None:
        value = k.value(name)
        if value is None:
            return None
        return Reading(value * scale, name, unit or (k.metrics[name].unit if scale == 1 else ""))
    label = name if scale == 1.0 else f"{name} x {scale:g}"
    return Source(label, read)


def total(*names: str, scale: float = 1.0, unit: str = "") -> Source:
    """The sum of the metrics present (None when none is)."""
    def read(k: KernelProfile) -> Reading | None:
        present = [(n, k.value(n)) for n in names]
        found = [(n, v) for n, v in present if v is not None]
        if not found:
            return None
        return Reading(scale * sum(v for _, v in found), " + ".join(n for n, _ in found), unit)
    return Source(" + ".join(names) + (f" x {scale:g}" if scale != 1.0 else ""), read)


def ratio(num: str | tuple[str, ...], den: str | tuple[str, ...], scale: float = 1.0,
          unit: str = "", clip: float | None = None) -> Source:
    """sum(num) / sum(den) x scale; None when a side is missing or the denominator is 0."""
    nums = (num,) if isinstance(num, str) else num
    dens = (den,) if isinstance(den, str) else den

    def read(k: KernelProfile) -> Reading | None:
        a = [k.value(n) for n in nums]
        b = [k.value(n) for n in dens]
        if any(v is None for v in a) or any(v is None for v in b):
            return None
        d = sum(v for v in b if v is not None)
        if d <= 0:
            return None
        value = scale * sum(v for v in a if v is not None) / d
        if clip is not None:
            value = min(value, clip)
        return Reading(value, _formula(nums, dens), unit)
    return Source(_formula(nums, dens) + (f" x {scale:g}" if scale != 1.0 else ""), read)


def _formula(nums: tuple[str, ...], dens: tuple[str, ...]) -> str:
    def side(names: tuple[str, ...]) -> str:
        return names[0] if len(names) == 1 else "(" + " + ".join(names) + ")"
    return f"{side(nums)} / {side(dens)}"


@dataclass(frozen=True)
class Quantity:
    name: str
    meaning: str
    sources: tuple[Source, ...]
    collect: str  # the ncu --section (or --metrics) that carries it

    def read(self, kernel: KernelProfile) -> Reading | None:
        for source in self.sources:
            found = source.read(kernel)
            if found is not None:
                return found
        return None


_SOL = "SpeedOfLight"
_PCT = ".avg.pct_of_peak_sustained_active"
_PCT_E = ".avg.pct_of_peak_sustained_elapsed"


_ACTIVE = Quantity(
    "sm_active", "fraction of elapsed cycles the average SM had work (0..1)",
    (ratio("sm__cycles_active.avg", "sm__cycles_elapsed.avg", clip=1.0),
     ratio("sm__cycles_active.avg", "gpc__cycles_elapsed.max", clip=1.0),
     ratio("smsp__cycles_active.avg", "smsp__cycles_elapsed.avg", clip=1.0)),
    _SOL)


def _elapsed_over_active(name: str) -> Source:
    """A % of peak over elapsed cycles, rescaled to the cycles the SMs were active (0..1)."""
    def read(k: KernelProfile) -> Reading | None:
        value = k.value(name)
        active = _ACTIVE.read(k)
        if value is None or active is None or active.value <= 0:
            return None
        return Reading(min(1.0, value / 100 / active.value), f"{name} / SM-active fraction")
    return Source(f"{name} / (sm__cycles_active.avg / sm__cycles_elapsed.avg)", read)


def _pipe(name: str, *metrics: str) -> Quantity:
    """A pipe's utilization while the SMs are active: the `_active` forms first; the
    `_elapsed` forms (the default set's) divided by the SM-active fraction."""
    sources = [metric(m + _PCT, 0.01) for m in metrics]
    sources += [_elapsed_over_active(m + _PCT_E) for m in metrics]
    return Quantity(f"pipe_{name}", f"{name} pipe utilization while SMs are active (0..1)",
                    tuple(sources), "ComputeWorkloadAnalysis (SpeedOfLight carries it too)")


QUANTITY_LIST: tuple[Quantity, ...] = (
    Quantity("duration_ns", "kernel duration (ns)",
             (metric("gpu__time_duration.sum"), metric("gpu__time_duration.avg"),
              ratio("gpc__cycles_elapsed.max", "gpc__cycles_elapsed.avg.per_second",
                    scale=1e9, unit="ns")), _SOL),
    _ACTIVE,
    Quantity("dram", "DRAM throughput, fraction of ncu's peak over elapsed time",
             (metric("gpu__dram_throughput" + _PCT_E, 0.01),
              metric("dram__throughput" + _PCT_E, 0.01),
              metric("dram__cycles_active" + _PCT_E, 0.01)), _SOL),
    Quantity("dram_bytes", "bytes moved between L2 and DRAM",
             (total("dram__bytes_read.sum", "dram__bytes_write.sum", unit="byte"),
              metric("dram__bytes.sum"),
              total("dram__sectors_read.sum", "dram__sectors_write.sum", scale=32.0,
                    unit="byte")), "MemoryWorkloadAnalysis"),
    Quantity("l1_hit_rate", "share of L1 sector lookups that hit (0..1)",
             (metric("l1tex__t_sector_hit_rate.pct", 0.01),), "MemoryWorkloadAnalysis"),
    Quantity("l2_hit_rate", "share of L2 sector lookups that hit (0..1)",
             (metric("lts__t_sector_hit_rate.pct", 0.01),), "MemoryWorkloadAnalysis"),
    Quantity("l2_reuse", "L2 sectors served per sector filled from DRAM, as shares of the two "
             "units' peaks (about 1 for a streaming kernel on an H200; re-read data more)",
             (ratio("lts__t_sectors" + _PCT_E, "lts__d_sectors_fill_device" + _PCT_E),),
             _SOL),
    Quantity("l2", "L2 throughput, fraction of peak over elapsed time",
             (metric("lts__throughput" + _PCT_E, 0.01),), _SOL),
    Quantity("l1", "L1/TEX throughput, fraction of peak while SMs are active",
             (metric("l1tex__throughput" + _PCT, 0.01),), _SOL),
    Quantity("sm", "SM (compute) throughput, fraction of peak over elapsed time",
             (metric("sm__throughput" + _PCT_E, 0.01),), _SOL),
    Quantity("issue", "issue slots busy while SMs are active (0..1)",
             (metric("smsp__issue_active" + _PCT, 0.01),
              _elapsed_over_active("sm__issue_active" + _PCT_E),
              _elapsed_over_active("sm__inst_issued" + _PCT_E)), "SchedulerStats or "
             "ComputeWorkloadAnalysis (SpeedOfLight carries sm__issue_active)"),
    _pipe("FMA", "sm__pipe_fma_cycles_active", "sm__inst_executed_pipe_fma"),
    _pipe("ALU", "sm__pipe_alu_cycles_active", "sm__inst_executed_pipe_alu"),
    _pipe("XU", "sm__inst_executed_pipe_xu"),
    _pipe("FP64", "sm__pipe_fp64_cycles_active", "sm__inst_executed_pipe_fp64"),
    _pipe("Tensor", "sm__pipe_tensor_cycles_active", "sm__pipe_tensor_op_hmma_cycles_active",
          "sm__inst_executed_pipe_tensor"),
    _pipe("LSU", "sm__inst_executed_pipe_lsu"),
    Quantity("theoretical_occupancy", "theoretical occupancy (0..1)",
             (metric("sm__maximum_warps_per_active_cycle_pct", 0.01),), "Occupancy"),
    Quantity("achieved_occupancy", "achieved occupancy while SMs are active (0..1)",
             (metric("sm__warps_active.avg.pct_of_peak_sustained_active", 0.01),), "Occupancy"),
    Quantity("grid", "blocks in the grid", (metric("launch__grid_size"),), "LaunchStats"),
    Quantity("block", "threads per block", (metric("launch__block_size"),), "LaunchStats"),
    Quantity("sms", "SMs of the GPU", (metric("launch__sm_count"),
                                       metric("device__attribute_multiprocessor_count")),
             "LaunchStats"),
    Quantity("waves", "waves of resident blocks the grid needs",
             (metric("launch__waves_per_multiprocessor"),), "LaunchStats"),
    Quantity("registers", "registers per thread", (metric("launch__registers_per_thread"),),
             "LaunchStats"),
    Quantity("l1_wavefronts_per_request",
             "L1 data-pipe wavefronts per LSU request: 1 for coalesced 4-byte accesses, up to "
             "4 for 16-byte ones, 32 for fully scattered or 32-way conflicting ones",
             (ratio("l1tex__data_pipe_lsu_wavefronts.sum", "l1tex__lsuin_requests.sum"),
              # Both units peak at one per L1 cycle, so their % of peak keep the ratio.
              ratio("l1tex__data_pipe_lsu_wavefronts" + _PCT_E,
                    "l1tex__lsuin_requests" + _PCT_E)), _SOL),
    Quantity("global_ld_bytes_per_sector",
             "bytes of each 32-byte sector a global load uses (32 = all)",
             (metric("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"),
              metric("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", 0.32,
                     "byte/sector"),
              metric("sm__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", 0.32,
                     "byte/sector")), "SourceCounters, or --metrics "
             "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"),
    Quantity("global_st_bytes_per_sector",
             "bytes of each 32-byte sector a global store uses (32 = all)",
             (metric("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio"),
              metric("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct", 0.32,
                     "byte/sector"),
              metric("sm__sass_average_data_bytes_per_sector_mem_global_op_st.pct", 0.32,
                     "byte/sector")), "SourceCounters, or --metrics "
             "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio"),
    Quantity("global_ld_sectors", "global load sectors requested from L1",
             (metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),),
             "MemoryWorkloadAnalysis_Tables"),
    Quantity("global_st_sectors", "global store sectors requested from L1",
             (metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),),
             "MemoryWorkloadAnalysis_Tables"),
    Quantity("global_excess_sectors", "global sectors beyond what the accesses need",
             (metric("derived__memory_l2_theoretical_sectors_global_excessive"),),
             "SourceCounters"),
    Quantity("local_bytes", "local-memory bytes through L1 (spills and stack arrays)",
             (total("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
                    "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", unit="byte"),
              total("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
                    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", scale=32.0,
                    unit="byte")), "MemoryWorkloadAnalysis_Tables"),
    Quantity("local_instructions", "warp-level local load and store instructions",
             (total("smsp__sass_inst_executed_op_local_ld.sum",
                    "smsp__sass_inst_executed_op_local_st.sum"),
              total("sass__inst_executed_local_loads", "sass__inst_executed_local_stores"),
              metric("smsp__sass_inst_executed_op_local.sum")), "SourceCounters"),
    Quantity("local_sectors_per_request",
             "L1 sectors per local-memory request: 4 when a warp's lanes touch one slot each "
             "(spills, uniform indexing), up to 32 when each lane indexes its own slot",
             (ratio(("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
                     "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"),
                    ("l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
                     "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum")),),
             "MemoryWorkloadAnalysis_Tables"),
    Quantity("spill_instructions", "local instructions that spill or fill registers",
             (metric("sass__inst_executed_register_spilling"),
              metric("derived__local_spilling_requests")), "SourceCounters"),
    Quantity("global_instructions", "warp-level global load and store instructions",
             (total("smsp__sass_inst_executed_op_global_ld.sum",
                    "smsp__sass_inst_executed_op_global_st.sum"),
              total("smsp__inst_executed_op_global_ld.sum",
                    "smsp__inst_executed_op_global_st.sum")), "SourceCounters"),
    Quantity("shared_excess", "shared-memory wavefronts beyond one per access (bank conflicts)",
             (metric("derived__memory_l1_wavefronts_shared_excessive"),
              total("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
              metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")),
             "MemoryWorkloadAnalysis_Tables"),
    Quantity("shared_wavefronts", "shared-memory wavefronts",
             (metric("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
              total("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")),
             "MemoryWorkloadAnalysis_Tables"),
    Quantity("atomic_requests", "global atomic and reduction requests (or instructions)",
             (total("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"),
              total("smsp__sass_inst_executed_op_global_atom.sum",
                    "smsp__sass_inst_executed_op_global_red.sum"),
              total("smsp__inst_executed_op_global_red.sum",
                    "smsp__inst_executed_op_generic_atom_dot_alu.sum",
                    "smsp__inst_executed_op_generic_atom_dot_cas.sum")),
             "MemoryWorkloadAnalysis_Tables"),
    Quantity("memory_requests", "global load and store requests (or instructions)",
             (total("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
              total("smsp__sass_inst_executed_op_global_ld.sum",
                    "smsp__sass_inst_executed_op_global_st.sum")),
             "MemoryWorkloadAnalysis_Tables"),
    Quantity("l2_atomic_busiest",
             "the busiest L2 slice's atomic unit, fraction of its peak (one hot address "
             "shows as one busy slice)",
             (metric("lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed", 0.01),),
             _SOL),
    Quantity("l2_atomic_average", "the L2 atomic units' average utilization",
             (metric("lts__d_atomic_input_cycles_active" + _PCT_E, 0.01),), _SOL),
    Quantity("lanes", "active threads per executed warp instruction (32 = no divergence)",
             (metric("smsp__thread_inst_executed_per_inst_executed.ratio"),
              ratio("smsp__thread_inst_executed.sum", "smsp__inst_executed.sum")),
             "WarpStateStats"),
)
def _thread_ops(op: str) -> str:
    return f"smsp__sass_thread_inst_executed_op_{op}_pred_on"


def _flops(prefix: str) -> tuple[Source, ...]:
    """FLOPs of one precision: 2 per FMA, 1 per add or multiply, from the per-thread
    instruction counts (our collection) or their rates per cycle times the cycles (the
    roofline sections of --set full)."""
    fma, add, mul = (_thread_ops(prefix + op) for op in ("fma", "add", "mul"))
    return (total(f"{fma}.sum", f"{fma}.sum", f"{add}.sum", f"{mul}.sum"),
            Source(f"({fma} x 2 + {add} + {mul}).sum.per_cycle_elapsed x "
                   "smsp__cycles_elapsed.avg", lambda k: _flops_from_rates(k, fma, add, mul)))


def _flops_from_rates(k: KernelProfile, fma: str, add: str, mul: str) -> Reading | None:
    cycles = k.value("smsp__cycles_elapsed.avg")
    rates = [k.value(f"{m}.sum.per_cycle_elapsed") for m in (fma, fma, add, mul)]
    if cycles is None or all(r is None for r in rates):
        return None
    return Reading(cycles * sum(r or 0.0 for r in rates),
                   f"{fma}.sum.per_cycle_elapsed x smsp__cycles_elapsed.avg", "")


COMPUTE_QUANTITIES: tuple[Quantity, ...] = (
    Quantity("flops_fp32", "FP32 floating-point operations counted", _flops("f"),
             "SpeedOfLight_RooflineChart (in --set full), or --metrics "
             + _thread_ops("ffma") + ".sum"),
    Quantity("flops_fp64", "FP64 floating-point operations counted", _flops("d"),
             "SpeedOfLight_RooflineChart (in --set full)"),
    Quantity("hmma_instructions", "warp-level HMMA (tensor-core) instructions",
             (metric("smsp__inst_executed_pipe_tensor_op_hmma.sum"),
              metric("sm__inst_executed_pipe_tensor_op_hmma.sum")), "ComputeWorkloadAnalysis"),
)
QUANTITY_LIST = QUANTITY_LIST + COMPUTE_QUANTITIES
QUANTITIES: dict[str, Quantity] = {q.name: q for q in QUANTITY_LIST}


def read(kernel: KernelProfile, name: str) -> Reading | None:
    return QUANTITIES[name].read(kernel)
