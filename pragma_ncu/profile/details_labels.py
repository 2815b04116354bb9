"""The summary rows of ncu's details page, by section title and row label, and the metric each
row shows: a details page alone (what `ncu --csv` and the GUI export by default) then still
carries a profile under metric names."""

from __future__ import annotations

# A details page's summary rows (section title, row label) -> the metric each one shows, so that
# a details page alone still carries a profile. Derived by matching the rows of recorded details
# pages with the raw pages of the same reports (ncu 2025.3); where several metrics carry the
# same value, the one the diagnosis reads is named. Titles are matched first; a label that
# occurs in one section only also matches under another title (ncu renames section titles).
DETAILS_METRICS: dict[tuple[str, str], str] = {
    ("GPU Speed Of Light Throughput", "DRAM Frequency"): "dram__cycles_elapsed.avg.per_second",
    ("GPU Speed Of Light Throughput", "SM Frequency"): "gpc__cycles_elapsed.avg.per_second",
    ("GPU Speed Of Light Throughput", "Elapsed Cycles"): "gpc__cycles_elapsed.max",
    ("GPU Speed Of Light Throughput", "Memory Throughput"):
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "DRAM Throughput"):
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "Duration"): "gpu__time_duration.sum",
    ("GPU Speed Of Light Throughput", "L1/TEX Cache Throughput"):
        "l1tex__throughput.avg.pct_of_peak_sustained_active",
    ("GPU Speed Of Light Throughput", "L2 Cache Throughput"):
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "SM Active Cycles"): "sm__cycles_active.avg",
    ("GPU Speed Of Light Throughput", "Compute (SM) Throughput"):
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    ("Launch Statistics", "Block Size"): "launch__block_size",
    ("Launch Statistics", "Grid Size"): "launch__grid_size",
    ("Launch Statistics", "Registers Per Thread"): "launch__registers_per_thread",
    ("Launch Statistics", "Shared Memory Configuration Size"): "launch__shared_mem_config_size",
    ("Launch Statistics", "Driver Shared Memory Per Block"): "launch__shared_mem_per_block_driver",
    ("Launch Statistics", "Dynamic Shared Memory Per Block"):
        "launch__shared_mem_per_block_dynamic",
    ("Launch Statistics", "Static Shared Memory Per Block"): "launch__shared_mem_per_block_static",
    ("Launch Statistics", "# SMs"): "launch__sm_count",
    ("Launch Statistics", "Stack Size"): "launch__stack_size",
    ("Launch Statistics", "Threads"): "launch__thread_count",
    ("Launch Statistics", "Waves Per SM"): "launch__waves_per_multiprocessor",
    ("Occupancy", "Block Limit Barriers"): "launch__occupancy_limit_barriers",
    ("Occupancy", "Block Limit SM"): "launch__occupancy_limit_blocks",
    ("Occupancy", "Block Limit Registers"): "launch__occupancy_limit_registers",
    ("Occupancy", "Block Limit Shared Mem"): "launch__occupancy_limit_shared_mem",
    ("Occupancy", "Block Limit Warps"): "launch__occupancy_limit_warps",
    ("Occupancy", "Theoretical Active Warps per SM"): "sm__maximum_warps_avg_per_active_cycle",
    ("Occupancy", "Theoretical Occupancy"): "sm__maximum_warps_per_active_cycle_pct",
    ("Occupancy", "Achieved Occupancy"): "sm__warps_active.avg.pct_of_peak_sustained_active",
    ("Occupancy", "Achieved Active Warps Per SM"): "sm__warps_active.avg.per_cycle_active",
    ("GPU and Memory Workload Distribution", "Average SM Active Cycles"): "sm__cycles_active.avg",
    ("GPU and Memory Workload Distribution", "Total SM Elapsed Cycles"): "sm__cycles_elapsed.sum",
    ("GPU and Memory Workload Distribution", "Average DRAM Active Cycles"):
        "dram__cycles_active.avg",
    ("GPU and Memory Workload Distribution", "Total DRAM Elapsed Cycles"):
        "dram__cycles_elapsed.sum",
    ("GPU and Memory Workload Distribution", "Average L2 Active Cycles"): "lts__cycles_active.avg",
    ("GPU and Memory Workload Distribution", "Total L2 Elapsed Cycles"): "lts__cycles_elapsed.sum",
    ("GPU and Memory Workload Distribution", "Average SMSP Active Cycles"):
        "smsp__cycles_active.avg",
    ("GPU and Memory Workload Distribution", "Total SMSP Elapsed Cycles"):
        "smsp__cycles_elapsed.sum",
    ("Compute Workload Analysis", "Executed Ipc Active"): "sm__inst_executed.avg.per_cycle_active",
    ("Compute Workload Analysis", "Executed Ipc Elapsed"):
        "sm__inst_executed.avg.per_cycle_elapsed",
    ("Compute Workload Analysis", "Issue Slots Busy"):
        "sm__issue_active.avg.pct_of_peak_sustained_elapsed",
    ("Compute Workload Analysis", "Issued Ipc Active"): "sm__inst_issued.avg.per_cycle_active",
    ("Compute Workload Analysis", "SM Busy"):
        "sm__instruction_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "Memory Throughput"): "dram__bytes.sum.per_second",
    ("Memory Workload Analysis", "Mem Busy"):
        "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "Max Bandwidth"):
        "gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "L1/TEX Hit Rate"): "l1tex__t_sector_hit_rate.pct",
    ("Memory Workload Analysis", "L2 Hit Rate"): "lts__t_sector_hit_rate.pct",
    ("Memory Workload Analysis", "Mem Pipes Busy"):
        "sm__memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "Local Memory Spilling Requests"):
        "derived__local_spilling_requests",
    ("Memory Workload Analysis", "Local Memory Spilling Request Overhead"):
        "derived__local_spilling_requests_pct",
    ("Scheduler Statistics", "One or More Eligible"):
        "smsp__issue_active.avg.pct_of_peak_sustained_active",
    ("Scheduler Statistics", "Issued Warp Per Scheduler"):
        "smsp__issue_active.avg.per_cycle_active",
    ("Scheduler Statistics", "No Eligible"): "smsp__issue_inst0.avg.pct_of_peak_sustained_active",
    ("Scheduler Statistics", "Active Warps Per Scheduler"):
        "smsp__warps_active.avg.per_cycle_active",
    ("Scheduler Statistics", "Eligible Warps Per Scheduler"):
        "smsp__warps_eligible.avg.per_cycle_active",
    ("Warp State Statistics", "Warp Cycles Per Issued Instruction"):
        "smsp__average_warp_latency_per_inst_issued.ratio",
    ("Warp State Statistics", "Warp Cycles Per Executed Instruction"):
        "smsp__average_warps_active_per_inst_executed.ratio",
    ("Warp State Statistics", "Avg. Active Threads Per Warp"):
        "smsp__thread_inst_executed_per_inst_executed.ratio",
    ("Warp State Statistics", "Avg. Not Predicated Off Threads Per Warp"):
        "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
    ("Instruction Statistics", "Executed Instructions"): "smsp__inst_executed.sum",
    ("Instruction Statistics", "Issued Instructions"): "smsp__inst_issued.sum",
    ("Source Counters", "Branch Instructions"): "smsp__inst_executed_op_branch.sum",
    ("Source Counters", "Branch Instructions Ratio"): "derived__smsp__inst_executed_op_branch_pct",
    ("Source Counters", "Branch Efficiency"):
        "smsp__sass_average_branch_targets_threads_uniform.pct",
    ("Source Counters", "Avg. Divergent Branches"):
        "smsp__sass_branch_targets_threads_divergent.avg",
}
_LABEL_ONLY = {label: metric for (_, label), metric in DETAILS_METRICS.items()
               if sum(1 for (_, other) in DETAILS_METRICS if other == label) == 1}


def details_metric(section: str, label: str) -> str | None:
    """The metric a details-page row shows, or None for rows the diagnosis does not read."""
    return DETAILS_METRICS.get((section, label)) or _LABEL_ONLY.get(label)
