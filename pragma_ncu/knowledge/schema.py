"""The compendium's schema: one entry per metric (or metric family), common to all profilers.

The curated core lives in the repository's `knowledge/` folder as TOML; `knowledge build` writes
generated entries with the same schema into the user's data folder. Explanations, the conductor and
the prompts read entries through `pragma_ncu.knowledge.compendium`, never the files directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from pragma_ncu.infra.errors import SpecError

PROFILERS = ("ncu", "perf", "cachegrind")

# The bottleneck vocabulary shared by the compendium, `explain` (diagnose) and the conductor.
BOTTLENECKS: dict[str, str] = {
    "memory_bandwidth": "DRAM (or L2) bandwidth is the limit: the kernel moves bytes as fast as "
                        "the memory system allows",
    "l2_bandwidth": "L2 bandwidth is the limit: data is re-read from L2 (or wasted and local "
                    "traffic moves through it) faster than DRAM traffic explains",
    "l1_bandwidth": "L1/shared-memory bandwidth is the limit: the SM moves data through L1 "
                    "(shared memory, cached global or local accesses) as fast as it can",
    "memory_latency": "memory latency is exposed: too few bytes in flight to cover it",
    "latency_bound": "no unit is busy: warps wait (on memory, dependencies, barriers or "
                     "atomics) rather than work",
    "uncoalesced_access": "global accesses touch more sectors than the data they use",
    "shared_bank_conflicts": "shared-memory accesses are serialized by bank conflicts",
    "register_spills": "registers spill to local memory",
    "local_memory": "per-thread arrays live in local memory (run-time indexing), not spills",
    "occupancy_registers": "registers per thread limit the warps resident per SM",
    "occupancy_shared": "shared memory per block limits the blocks resident per SM",
    "occupancy_block": "the block size or the per-SM block limit caps resident warps",
    "small_grid": "too few blocks to fill the GPU's SMs",
    "tail_effect": "the last wave of blocks leaves SMs idle",
    "warp_divergence": "threads of a warp take different paths, idling lanes",
    "compute_fma": "the FMA/ALU pipes are the limit",
    "compute_sfu": "the special-function (XU) pipe is the limit",
    "compute_fp64": "the FP64 pipe is the limit",
    "tensor_core": "the tensor-core pipe is the limit (or is unused where it could be)",
    "instruction_issue": "the schedulers issue an instruction almost every cycle",
    "barrier_stall": "warps wait at __syncthreads barriers",
    "atomic_contention": "atomics on the same addresses serialize",
    "launch_overhead": "the kernel is so short that launch and ramp-up dominate",
    "frontend_bound": "CPU: instruction fetch/decode cannot keep the back end fed",
    "backend_memory": "CPU: the back end waits on the memory hierarchy",
    "backend_core": "CPU: the back end waits on execution units",
    "bad_speculation": "CPU: work is thrown away after branch mispredictions",
    "retiring": "CPU: most slots retire useful micro-ops",
}


@dataclass(frozen=True)
class MetricEntry:
    """What a metric (or a family sharing a prefix) means and how to act on it."""

    name: str  # the metric, or the family prefix when `family` is true
    profiler: str  # one of PROFILERS
    title: str  # a short human name, e.g. "DRAM throughput"
    group: str  # e.g. speed_of_light, memory, occupancy, launch, warp_stalls, ...
    unit: str  # as the profiler reports it ("%", "byte", "cycle", "inst", "")
    meaning: str  # in the project's own words
    hardware_unit: str  # what measures it, e.g. "DRAM controllers (FBPA)"
    indicates: tuple[str, ...]  # BOTTLENECKS keys
    reading: str  # how to read the value: thresholds, ratios to related metrics
    sources: tuple[str, ...]  # URLs or doc paths the entry was written from
    related: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # other names of the same quantity (older ncu, CSV headers)
    family: bool = False
    origin: str = "curated"  # "curated" (shipped) or "generated" (knowledge build)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Strategy:
    """What to try for one bottleneck class, and the evidence that points to it."""

    bottleneck: str  # a BOTTLENECKS key
    evidence: str  # the metric pattern that identifies it, in words
    metrics: tuple[str, ...]  # the metrics that make up that evidence
    actions: tuple[str, ...]  # concrete changes, most promising first
    knobs: tuple[str, ...] = ()  # template parameters these actions usually map to
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class GpuSpec:
    """Limits and peak rates of a GPU model, marked by where they come from."""

    name: str
    arch: str  # e.g. sm_90
    sm_count: int
    values: Mapping[str, float] = field(default_factory=dict)  # e.g. dram_gbps, fp32_tflops
    provenance: str = "datasheet"
    sources: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # other spellings, e.g. the driver's "NVIDIA H100 80GB HBM3"


_ENTRY_REQUIRED = ("name", "profiler", "title", "group", "unit", "meaning", "hardware_unit",
                   "indicates", "reading", "sources")
_ENTRY_TUPLES = ("indicates", "sources", "related", "hints", "aliases")


def entry_from_dict(data: Mapping[str, Any], where: str) -> MetricEntry:
    """Validate one entry (from TOML or JSON); SpecError names the field and the file."""
    known = set(MetricEntry.__dataclass_fields__)
    for key in data:
        if key not in known:
            raise SpecError(where, f"metric.{key}", f"one of {sorted(known)}", key)
    for key in _ENTRY_REQUIRED:
        if key not in data or data[key] in ("", None) and key != "unit":
            raise SpecError(where, f"{data.get('name', '?')}.{key}", "a value", "nothing")
    values = dict(data)
    for key in _ENTRY_TUPLES:
        value = values.get(key, ())
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise SpecError(where, f"{data['name']}.{key}", "a list of strings", repr(value))
        values[key] = tuple(value)
    entry = MetricEntry(**values)
    _check_entry(entry, where)
    return entry


def _check_entry(entry: MetricEntry, where: str) -> None:
    if entry.profiler not in PROFILERS:
        raise SpecError(where, f"{entry.name}.profiler", f"one of {PROFILERS}", entry.profiler)
    unknown = [b for b in entry.indicates if b not in BOTTLENECKS]
    if unknown:
        raise SpecError(where, f"{entry.name}.indicates", "bottleneck names from "
                        "pragma_ncu.knowledge.schema.BOTTLENECKS", ", ".join(unknown))
    if not entry.sources:
        raise SpecError(where, f"{entry.name}.sources", "at least one URL or doc path", "none")


def strategy_from_dict(data: Mapping[str, Any], where: str) -> Strategy:
    known = set(Strategy.__dataclass_fields__)
    extra = set(data) - known
    if extra:
        raise SpecError(where, f"strategy.{sorted(extra)[0]}", f"one of {sorted(known)}",
                        sorted(extra)[0])
    for key in ("bottleneck", "evidence", "metrics", "actions"):
        if not data.get(key):
            raise SpecError(where, f"strategy.{key}", "a value", "nothing")
    if data["bottleneck"] not in BOTTLENECKS:
        raise SpecError(where, "strategy.bottleneck", "a BOTTLENECKS key", data["bottleneck"])
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("metrics", "actions", "knobs", "sources"):
        value = data.get(key, ())
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise SpecError(where, f"strategy.{key}", "a list of strings", repr(value))
        lists[key] = tuple(value)
    return Strategy(bottleneck=str(data["bottleneck"]), evidence=str(data["evidence"]), **lists)


_GPU_PROVENANCES = ("datasheet", "measured", "estimated")


def gpu_from_dict(data: Mapping[str, Any], where: str) -> GpuSpec:
    """Validate one `[[gpu]]` table; SpecError names the field and the file."""
    known = set(GpuSpec.__dataclass_fields__)
    extra = sorted(set(data) - known)
    if extra:
        raise SpecError(where, f"gpu.{extra[0]}", f"one of {sorted(known)}", extra[0])
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise SpecError(where, "gpu.name", "a non-empty string", name)
    if not isinstance(data.get("arch"), str) or not str(data["arch"]).startswith("sm_"):
        raise SpecError(where, f"{name}.arch", "an arch such as 'sm_90'", data.get("arch"))
    count = data.get("sm_count")
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        raise SpecError(where, f"{name}.sm_count", "a positive integer", count)
    values = data.get("values", {})
    if not isinstance(values, Mapping) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values.values()):
        raise SpecError(where, f"{name}.values", "a table of numbers", values)
    provenance = data.get("provenance", "datasheet")
    if provenance not in _GPU_PROVENANCES:
        raise SpecError(where, f"{name}.provenance", f"one of {_GPU_PROVENANCES}", provenance)
    for key in ("sources", "aliases"):
        seq = data.get(key, ())
        if isinstance(seq, str) or not all(isinstance(v, str) for v in seq):
            raise SpecError(where, f"{name}.{key}", "a list of strings", seq)
    return GpuSpec(name=name, arch=data["arch"], sm_count=count,
                   values={k: float(v) for k, v in values.items()}, provenance=provenance,
                   sources=tuple(data.get("sources", ())), aliases=tuple(data.get("aliases", ())))
