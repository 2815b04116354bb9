"""Deterministic facts about metric names and text: the rules the summarizer falls back on.

Metric names by pattern (ncu's `unit__counter.rollup.submetric`), units by name and wording,
bottleneck classes (BOTTLENECKS keys) by metric prefix and keywords, the hardware unit behind a
prefix, the group a metric belongs to, and the sentences of a text that talk about a metric.
The phrasing of readings here is the project's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

NCU_METRIC = re.compile(
    r"(?<![\w.:/-])(?:breakdown:)?([a-z][a-z0-9]*__[a-z0-9_]+(?:\.[a-z0-9_]+)*)")

# (pattern over the metric name, bottleneck); the first match does not stop the search.
NCU_NAME_RULES: tuple[tuple[str, str], ...] = (
    (r"^(dram|fbpa)__|^gpu__dram_throughput|dram_throughput", "memory_bandwidth"),
    (r"^lts__t_(bytes|sectors)$|^lts__throughput", "memory_bandwidth"),
    (r"long_scoreboard", "memory_latency"),
    (r"sectors_per_request|_mem_global_op_(ld|st)_sectors|uncoalesced", "uncoalesced_access"),
    (r"bank_conflict|shared_.*wavefronts", "shared_bank_conflicts"),
    (r"mem_local|local_(load|store)|spill", "register_spills"),
    (r"occupancy_limit_registers|registers_per_thread", "occupancy_registers"),
    (r"occupancy_limit_shared_mem|shared_mem_per_block", "occupancy_shared"),
    (r"occupancy_limit_(blocks|warps)|launch__block_size", "occupancy_block"),
    (r"^launch__grid_size|^launch__sm_count", "small_grid"),
    (r"waves_per_multiprocessor", "tail_effect"),
    (r"divergent|branch_targets_threads|thread_inst_executed_pred_on", "warp_divergence"),
    (r"pipe_(fma|alu|fp16)|_op_(ffma|fadd|fmul)", "compute_fma"),
    (r"pipe_xu|_xu_|stalled_mio_throttle_xu", "compute_sfu"),
    (r"pipe_fp64|_op_d(add|fma|mul)", "compute_fp64"),
    (r"pipe_tensor|tensor|hmma|imma|_mma", "tensor_core"),
    (r"issue_active|inst_issued|stalled_(not_selected|selected|dispatch)", "instruction_issue"),
    (r"stalled_barrier|stalled_membar", "barrier_stall"),
    (r"atom|_red_|_op_red", "atomic_contention"),
)

# (pattern over prose, bottleneck): phrases specific enough to be read without context.
TEXT_RULES: tuple[tuple[str, str], ...] = (
    (r"bank conflict", "shared_bank_conflicts"),
    (r"uncoalesced|sectors per request|excessive sectors", "uncoalesced_access"),
    (r"\bspill", "register_spills"),
    (r"long scoreboard|memory latency", "memory_latency"),
    (r"divergen", "warp_divergence"),
    (r"tail effect|partial wave", "tail_effect"),
    (r"\batomic", "atomic_contention"),
    (r"barrier", "barrier_stall"),
    (r"tensor core", "tensor_core"),
    (r"launch overhead", "launch_overhead"),
    (r"dram bandwidth|memory bandwidth", "memory_bandwidth"),
    (r"limited by (the )?registers|register usage limits", "occupancy_registers"),
    (r"limited by (the )?shared memory", "occupancy_shared"),
)

PERF_RULES: tuple[tuple[str, str], ...] = (
    (r"frontend|front-end|icache|itlb|idq|decode|fetch", "frontend_bound"),
    (r"cache-misses|cache_misses|llc|l1-dcache|l1d|dtlb|l2|l3|mem_load|memory_bound|"
     r"stalled-cycles-backend|mem-loads|mem-stores", "backend_memory"),
    (r"core_bound|ports_util|divider|backend_bound_core", "backend_core"),
    (r"branch-misses|branch_misses|mispredict|bad_spec|machine_clear|brn_misp", "bad_speculation"),
    (r"retiring|retired|instructions", "retiring"),
)

HARDWARE_UNITS: dict[str, str] = {
    "dram": "DRAM (device memory)",
    "fbpa": "frame-buffer partitions (DRAM controllers)",
    "lts": "L2 cache slices (LTS)",
    "ltc": "L2 cache (LTC)",
    "l1tex": "L1/TEX cache and shared memory",
    "sm": "streaming multiprocessors (SM)",
    "smsp": "SM sub-partitions (warp schedulers)",
    "gpc": "graphics processing clusters (GPC)",
    "tpc": "texture processing clusters (TPC)",
    "gpu": "the whole GPU",
    "launch": "the launch configuration (not a hardware counter)",
    "device": "device attributes (not a hardware counter)",
    "profiler": "the profiler itself",
    "pcie": "the PCIe interface",
    "nvlrx": "NVLink receive",
    "nvltx": "NVLink transmit",
    "idc": "the indexed constant cache",
    "sass": "SASS instruction counters",
    "inst": "instruction counters",
}

GROUP_RULES: tuple[tuple[str, str], ...] = (
    (r"stall", "warp_stalls"),
    (r"occupancy|warps_active|^launch__occupancy", "occupancy"),
    (r"^launch__", "launch"),
    (r"^device__", "device"),
    (r"throughput$|pct_of_peak|^gpu__compute_memory", "speed_of_light"),
    (r"^(dram|fbpa|lts|ltc|l1tex)__|bytes|sectors|mem_", "memory"),
    (r"pipe_|_op_|tensor", "compute"),
    (r"inst|issue|sass", "instructions"),
    (r"cycles|time|duration|clock|frequency", "timing"),
)

# Generic perf events worth finding in prose (man pages): named by the kernel, same on all CPUs.
# ("cycles", "instructions" and "branches" are left out: in prose they are ordinary words.)
PERF_GENERIC_EVENTS = (
    "cpu-cycles", "cache-references", "cache-misses",
    "branch-instructions", "branch-misses", "bus-cycles", "ref-cycles",
    "stalled-cycles-frontend", "stalled-cycles-backend", "task-clock", "cpu-clock",
    "page-faults", "context-switches", "cpu-migrations", "minor-faults", "major-faults",
    "L1-dcache-loads", "L1-dcache-load-misses", "L1-icache-load-misses", "LLC-loads",
    "LLC-load-misses", "dTLB-load-misses", "iTLB-load-misses",
)

_UNIT_BY_NAME: tuple[tuple[str, str], ...] = (
    (r"pct|percent|throughput$|occupancy$", "%"), (r"occupancy_limit", "block"),
    (r"bytes", "byte"), (r"sectors", "sector"),
    (r"requests", "request"), (r"wavefronts", "wavefront"), (r"cycles", "cycle"),
    (r"duration|time_", "ns"), (r"inst", "inst"), (r"warps", "warp"), (r"threads", "thread"),
    (r"registers", "register"), (r"blocks|grid_size", "block"),
)
_UNIT_BY_TEXT: tuple[tuple[str, str], ...] = (
    (r"# of bytes|number of bytes|\bbytes\b", "byte"), (r"# of sectors", "sector"),
    (r"# of cycles|number of cycles", "cycle"), (r"# of (warp )?instructions", "inst"),
    (r"# of requests", "request"), (r"# of warps", "warp"), (r"\bpercent|%", "%"),
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_THRESHOLD = re.compile(r"\d\s*%|\b(above|below|higher than|lower than|greater than|less than|"
                        r"close to|near|at least|at most|ideal|should|indicates?|means?)\b", re.I)


def ncu_metric_names(text: str) -> list[str]:
    """ncu metric names in `text`, reduced to base names, in order of first mention."""
    seen: dict[str, None] = {}
    for match in NCU_METRIC.finditer(text):
        base = base_metric(match.group(1))
        if base and not base.endswith("_"):  # "..._stalled_" + reason: a prefix, not a metric
            seen.setdefault(base, None)
    return list(seen)


def base_metric(name: str) -> str:
    """`dram__bytes_read.sum.per_second` -> `dram__bytes_read` (rollups and ratios dropped)."""
    name = name.strip().removeprefix("breakdown:")
    return name.split(".", 1)[0]


def unit_prefix(name: str) -> str:
    """The hardware-unit part of an ncu metric name: `l1tex` for `l1tex__t_bytes`."""
    return name.split("__", 1)[0] if "__" in name else ""


def hardware_unit(name: str, profiler: str = "ncu") -> str:
    """What counts the metric, in words."""
    if profiler == "perf":
        return "CPU performance-monitoring unit (PMU)"
    prefix = unit_prefix(name)
    return HARDWARE_UNITS.get(prefix, f"the '{prefix}' unit" if prefix else "unknown")


def guess_unit(name: str, text: str = "") -> str:
    """A unit from the description's wording, else from the name; "" when neither says."""
    lowered = text.lower()
    for pattern, unit in _UNIT_BY_TEXT:
        if lowered and re.search(pattern, lowered):
            return unit
    for pattern, unit in _UNIT_BY_NAME:
        if re.search(pattern, name):
            return unit
    return ""


def bottlenecks_for(name: str, text: str = "", profiler: str = "ncu") -> tuple[str, ...]:
    """The bottleneck classes a metric (and what is said about it) points to, without repeats."""
    found: dict[str, None] = {}
    if profiler == "perf":
        for pattern, key in PERF_RULES:
            if re.search(pattern, name.lower()):
                found.setdefault(key, None)
        return tuple(found)
    for pattern, key in NCU_NAME_RULES:
        if re.search(pattern, name):
            found.setdefault(key, None)
    lowered = text.lower()
    for pattern, key in TEXT_RULES:
        if lowered and re.search(pattern, lowered):
            found.setdefault(key, None)
    return tuple(found)


def group_for(name: str, profiler: str = "ncu", topic: str = "") -> str:
    """The compendium group of a metric (perf: its topic, normalized)."""
    if profiler == "perf":
        return re.sub(r"[^a-z0-9]+", "_", topic.lower()).strip("_") or "events"
    for pattern, group in GROUP_RULES:
        if re.search(pattern, name):
            return group
    return "other"


def reading_for(name: str, unit: str, profiler: str = "ncu") -> str:
    """A default way to read the value when the sources give none."""
    if unit == "%":
        return ("A share of a peak or of the total: near 100% means this resource is the limit; "
                "compare it with the other units' throughputs before acting on it.")
    if profiler == "perf":
        return ("A count over the run: compare it per instruction or per cycle, and between "
                "versions of the same program, rather than as an absolute number.")
    if name.startswith(("launch__", "device__")):
        return "A property of the launch or device: compare it with the hardware limits."
    return ("A raw count or rate: compare it between kernel versions, or divide it by a related "
            "count (per request, per instruction, per cycle) to judge efficiency.")


def title_for(name: str) -> str:
    """A readable title made from the name when no source gives one."""
    body = name.split("__", 1)[-1] if "__" in name else name
    words = re.sub(r"[_.-]+", " ", body).strip()
    prefix = unit_prefix(name)
    return f"{prefix.upper()} {words}" if prefix else words


def sentences_about(text: str, names: Iterable[str], limit: int = 2,
                    max_chars: int = 400) -> list[str]:
    """Up to `limit` sentences of `text` that mention any of `names` (whole sentences)."""
    wanted = [n for n in names if n]
    out: list[str] = []
    for sentence in _sentences(text):
        sentence = " ".join(sentence.split())
        if sentence and any(n in sentence for n in wanted) and sentence not in out:
            out.append(sentence[:max_chars])
        if len(out) >= limit:
            break
    return out


def _sentences(text: str) -> list[str]:
    """Sentences of prose whose lines may be wrapped; table rows (" | ") stay one per line."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in para.splitlines() if line.strip()]
        if any(" | " in line for line in lines):
            out += lines
        else:
            out += _SENTENCE.split(" ".join(lines))
    return out


def threshold_sentences(sentences: Iterable[str]) -> list[str]:
    """The sentences that say how to read a value (numbers with %, comparisons, advice)."""
    return [s for s in sentences if _THRESHOLD.search(s)]


def perf_event_mentions(text: str) -> list[str]:
    """Generic perf event names mentioned in prose, in a fixed order."""
    return [e for e in PERF_GENERIC_EVENTS
            if re.search(rf"(?<![\w-]){re.escape(e)}(?![\w-])", text)]
