"""Derived quantities read off a kernel profile: stall shares, waste ratios, the roofline.

ncu renames metrics between versions and chips; each quantity lists the names it accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.profile.model import KernelProfile

STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"

DURATION = ("gpu__time_duration.sum",)
DRAM_PCT = ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed")
SM_PCT = ("sm__throughput.avg.pct_of_peak_sustained_elapsed",)
MEM_PCT = ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",)
L2_PCT = ("lts__throughput.avg.pct_of_peak_sustained_elapsed",)
L1_PCT = ("l1tex__throughput.avg.pct_of_peak_sustained_active",)
ISSUE_PCT = ("smsp__issue_active.avg.pct_of_peak_sustained_active",)
THEORETICAL_OCC = ("sm__maximum_warps_per_active_cycle_pct",)
ACHIEVED_OCC = ("sm__warps_active.avg.pct_of_peak_sustained_active",)
THREADS_PER_INST = ("smsp__thread_inst_executed_per_inst_executed.ratio",)
GRID = ("launch__grid_size",)
SMS = ("launch__sm_count", "device__attribute_multiprocessor_count")
WAVES = ("launch__waves_per_multiprocessor",)
PIPES = {  # pipe -> (metric names, bottleneck)
    "FMA": (("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
             "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active"), "compute_fma"),
    "ALU": (("sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
             "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active"), "compute_fma"),
    "XU": (("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",), "compute_sfu"),
    "FP64": (("sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
              "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active"), "compute_fp64"),
    "Tensor": (("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
               "tensor_core"),
    "LSU": (("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",),
            "memory_latency"),
}
LIMITERS = {  # occupancy limiter metric -> bottleneck
    "launch__occupancy_limit_registers": "occupancy_registers",
    "launch__occupancy_limit_shared_mem": "occupancy_shared",
    "launch__occupancy_limit_warps": "occupancy_block",
    "launch__occupancy_limit_blocks": "occupancy_block",
}


def stall_name(reason: str) -> str:
    return f"{STALL_PREFIX}{reason}{STALL_SUFFIX}"


@dataclass(frozen=True)
class Stalls:
    """Cycles between issues per warp, split by reason (ncu's warp-state statistics)."""

    by_reason: dict[str, float]

    @property
    def total(self) -> float:
        return sum(v for k, v in self.by_reason.items() if k != "selected") or 0.0

    def share(self, *reasons: str) -> float:
        total = self.total
        return sum(self.by_reason.get(r, 0.0) for r in reasons) / total if total else 0.0

    def top(self, n: int = 3) -> list[tuple[str, float]]:
        items = [(k, v) for k, v in self.by_reason.items() if k != "selected"]
        return sorted(items, key=lambda kv: -kv[1])[:n]


def stalls(k: KernelProfile) -> Stalls:
    out = {}
    for name, metric in k.group(STALL_PREFIX).items():
        if name.endswith(STALL_SUFFIX) and not isinstance(metric.value, str):
            out[name[len(STALL_PREFIX):-len(STALL_SUFFIX)]] = float(metric.value)
    return Stalls(out)


def pct(k: KernelProfile, names: tuple[str, ...]) -> float:
    return k.first(*names) or 0.0


def dram_bytes(k: KernelProfile) -> float | None:
    read, write = k.value("dram__bytes_read.sum"), k.value("dram__bytes_write.sum")
    if read is None and write is None:
        return None
    return (read or 0.0) + (write or 0.0)


def top_pipe(k: KernelProfile) -> tuple[str, float, str]:
    """(pipe, % of peak while active, bottleneck) of the busiest execution pipe."""
    best = ("", 0.0, "")
    for pipe, (names, bottleneck) in PIPES.items():
        value = k.first(*names)
        if value is not None and value > best[1]:
            best = (pipe, value, bottleneck)
    return best


def occupancy_limiter(k: KernelProfile) -> tuple[str, float] | None:
    """The launch__occupancy_limit_* metric with the fewest blocks per SM, and that count."""
    limits = [(name, k.value(name)) for name in LIMITERS]
    present = [(n, v) for n, v in limits if v is not None]
    if not present:
        return None
    return min(present, key=lambda nv: (nv[1], list(LIMITERS).index(nv[0])))


def global_waste(k: KernelProfile) -> tuple[float, str, float] | None:
    """(fraction of fetched global bytes unused, metric, used %) for loads or stores,
    whichever wastes more of the traffic it causes."""
    worst = None
    for op in ("ld", "st"):
        used = k.value(f"smsp__sass_average_data_bytes_per_sector_mem_global_op_{op}.pct")
        sectors = k.value(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum") or 0.0
        if used is None or sectors <= 0:
            continue
        waste = sectors * (1 - used / 100)
        if worst is None or waste > worst[0]:
            worst = (waste, op, used, sectors)
    if worst is None:
        return None
    total = sum(k.value(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum") or 0.0
                for op in ("ld", "st"))
    _, op, used, _ = worst
    return (worst[0] / total if total else 0.0,
            f"smsp__sass_average_data_bytes_per_sector_mem_global_op_{op}.pct", used)
