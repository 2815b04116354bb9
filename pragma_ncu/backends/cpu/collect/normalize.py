"""CPU collector output -> the project's profile noun (`Profile` / `KernelProfile`).

Both collectors end in the same shape the diagnosis reads for GPU kernels: per-call metrics with
units, and (for cachegrind) source-line hotspots. What a collector could not measure is left out
of the metrics, never written as zero. cachegrind's counts are simulated and deterministic;
perf's are the hardware's, after subtracting an init-only run of the same driver.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pragma_ncu.backends.cpu.collect.cachegrind import Cachegrind, LineCounts
from pragma_ncu.backends.cpu.collect.perf_stat import PerfStat
from pragma_ncu.profile.profiles import KernelProfile, Metric, Profile, SourceLine

CACHEGRIND_UNITS = {
    "Ir": "inst", "I1mr": "miss", "ILmr": "miss", "Dr": "access", "Dw": "access",
    "D1mr": "miss", "D1mw": "miss", "DLmr": "miss", "DLmw": "miss", "Bc": "branch",
    "Bi": "branch", "Bcm": "mispredict", "Bim": "mispredict",
}
# a line's estimated cost in instruction-equivalents: misses and mispredicts stall the core
COST_WEIGHTS = {"Ir": 1, "D1": 10, "LL": 100, "mispredicts": 15}
HOTSPOT_LIMIT = 10
_STALLS = (("D1 misses", ("D1mr", "D1mw")), ("LL misses", ("DLmr", "DLmw")),
           ("mispredicts", ("Bcm", "Bim")))
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")


def kernel_lines(cg: Cachegrind, kernel_name: str, source_file: str) -> tuple[LineCounts, ...]:
    """The kernel's own lines: functions named by its symbol (with GCC's suffixes such as
    `conv1d._omp_fn.0`, `.part.0`, `.cold`) or lines in the kernel's source file."""
    base = Path(source_file).name
    return tuple(ln for ln in cg.lines
                 if is_kernel_function(ln.function, kernel_name) or Path(ln.file).name == base)


def is_kernel_function(function: str, symbol: str) -> bool:
    """`conv1d`, `conv1d._omp_fn.0` and `conv1d(float*, int)` are conv1d's; `conv1d_ref` is not."""
    if not function.startswith(symbol):
        return False
    rest = function[len(symbol):]
    return not rest or _IDENT_CHAR.match(rest[0]) is None


def from_cachegrind(cg: Cachegrind, kernel_name: str, source_file: str,
                    reps: int) -> KernelProfile:
    """Per-call counts, derived rates and hotspots of the kernel's lines in a cachegrind run of
    `reps` calls; ValueError when no line belongs to the kernel."""
    if reps < 1:
        raise ValueError(f"reps must be >= 1 for cachegrind (per-call figures), got {reps}")
    lines = kernel_lines(cg, kernel_name, source_file)
    if not lines:
        raise ValueError(f"no cachegrind line belongs to {kernel_name!r} (no function of that "
                         f"name, no line in {Path(source_file).name}): was it built with -g?")
    events = [e for e in CACHEGRIND_UNITS if e in cg.totals]  # the events this run simulated
    totals = {e: sum(ln.counts.get(e, 0) for ln in lines) / reps for e in events}
    metrics = {e: Metric(e, totals[e], CACHEGRIND_UNITS[e]) for e in events}
    metrics.update(_cachegrind_rates(totals))
    return KernelProfile(name=kernel_name, mangled=kernel_name, index=0, metrics=metrics,
                         hotspots=_hotspots(lines, source_file, reps))


def _cachegrind_rates(t: dict[str, float]) -> dict[str, Metric]:
    out: dict[str, Metric] = {}

    def add(name: str, num: Sequence[str], den: Sequence[str], scale: float, unit: str) -> None:
        if all(e in t for e in (*num, *den)) and sum(t[e] for e in den) > 0:
            out[name] = Metric(name, scale * sum(t[e] for e in num) / sum(t[e] for e in den),
                               unit)

    add("D1_miss_rate", ("D1mr", "D1mw"), ("Dr", "Dw"), 1.0, "ratio")
    add("LL_data_miss_rate", ("DLmr", "DLmw"), ("Dr", "Dw"), 1.0, "ratio")
    add("branch_mispredict_rate", ("Bcm", "Bim"), ("Bc", "Bi"), 1.0, "ratio")
    add("D1_MPKI", ("D1mr", "D1mw"), ("Ir",), 1000.0, "miss/kinst")
    add("LL_MPKI", ("DLmr", "DLmw"), ("Ir",), 1000.0, "miss/kinst")
    return out


def line_cost(counts: dict[str, float]) -> float:
    """Ir + 10 * D1 misses + 100 * LL misses + 15 * mispredicts (an estimate, in
    instruction-equivalents)."""
    d1 = counts.get("D1mr", 0) + counts.get("D1mw", 0)
    ll = counts.get("DLmr", 0) + counts.get("DLmw", 0)
    bad = counts.get("Bcm", 0) + counts.get("Bim", 0)
    w = COST_WEIGHTS
    return w["Ir"] * counts.get("Ir", 0) + w["D1"] * d1 + w["LL"] * ll + w["mispredicts"] * bad


def _hotspots(lines: Sequence[LineCounts], source_file: str,
              reps: int) -> tuple[SourceLine, ...]:
    merged: dict[tuple[str, int], dict[str, float]] = {}
    for ln in lines:  # one source line may sit in several functions (inlining, OpenMP outlines)
        slot = merged.setdefault((ln.file, ln.line), {})
        for event, count in ln.counts.items():
            slot[event] = slot.get(event, 0) + count
    ranked = sorted(merged.items(), key=lambda kv: -line_cost(kv[1]))[:HOTSPOT_LIMIT]
    texts: dict[str, list[str] | None] = {}
    return tuple(_source_line(file, line, counts, reps, _text(file, line, source_file, texts))
                 for (file, line), counts in ranked if line_cost(counts) > 0)


def _source_line(file: str, line: int, counts: dict[str, float], reps: int,
                 text: str) -> SourceLine:
    stalls = {name: round(sum(counts.get(e, 0) for e in events) / reps)
              for name, events in _STALLS}
    ordered = dict(sorted(((k, v) for k, v in stalls.items() if v > 0), key=lambda kv: -kv[1]))
    ir = counts.get("Ir", 0) / reps
    return SourceLine(file=file, line=line, samples=round(ir), stalls=ordered,
                      instructions=float(ir), text=text)


def _text(file: str, line: int, source_file: str, cache: dict[str, list[str] | None]) -> str:
    """The line's text, from the recorded path or, for the kernel's file, the given path."""
    if file not in cache:
        cache[file] = None
        candidates = [Path(file)]
        if Path(file).name == Path(source_file).name:
            candidates.append(Path(source_file))
        for path in candidates:
            try:
                cache[file] = path.read_text(errors="replace").splitlines()
                break
            except OSError:
                continue
    body = cache[file]
    return body[line - 1].strip() if body and 0 < line <= len(body) else ""


# --- perf stat ---------------------------------------------------------------------------------

TOPDOWN_L1 = ("tma_retiring", "tma_bad_speculation", "tma_frontend_bound", "tma_backend_bound")
TOPDOWN_L2 = ("tma_memory_bound", "tma_core_bound", "tma_fetch_latency", "tma_fetch_bandwidth",
              "tma_branch_mispredicts", "tma_machine_clears", "tma_light_operations",
              "tma_heavy_operations")
_TOPDOWN_ALIASES = {
    "bad_spec": "bad_speculation", "fe_bound": "frontend_bound", "be_bound": "backend_bound",
    "mem_bound": "memory_bound", "fetch_lat": "fetch_latency", "fetch_bw": "fetch_bandwidth",
    "br_mispredict": "branch_mispredicts", "heavy_ops": "heavy_operations",
    "light_ops": "light_operations", "branch_mispredict": "branch_mispredicts",
    "machine_clear": "machine_clears",
    # AMD Zen 4's PipelineL1/L2 names for the same nodes
    "backend_bound_memory": "memory_bound", "backend_bound_cpu": "core_bound",
    "frontend_bound_latency": "fetch_latency", "frontend_bound_bandwidth": "fetch_bandwidth",
    "bad_speculation_mispredicts": "branch_mispredicts",
    "bad_speculation_pipeline_restarts": "machine_clears",
    "retiring_fastpath": "light_operations", "retiring_microcode": "heavy_operations",
}
# level-2 nodes perf has no raw event for: parent minus the sibling it does count
_TOPDOWN_REST = (("tma_light_operations", "tma_retiring", "tma_heavy_operations"),
                 ("tma_machine_clears", "tma_bad_speculation", "tma_branch_mispredicts"),
                 ("tma_fetch_bandwidth", "tma_frontend_bound", "tma_fetch_latency"),
                 ("tma_core_bound", "tma_backend_bound", "tma_memory_bound"))
_PMU = re.compile(r"^[\w.-]+/([^/=,]+)/[a-zA-Z]*$")  # cpu_core/cycles/ or cpu/cycles/u
_MODIFIERS = re.compile(r":[ukhIGHpPSDWe]+$")


def event_name(event: str) -> str:
    """'cpu_core/cycles/' -> 'cycles', 'instructions:u' -> 'instructions'."""
    m = _PMU.match(event.strip())
    name = m.group(1) if m else event.strip()
    return _MODIFIERS.sub("", name)


def topdown_name(name: str) -> str | None:
    """'% tma_retiring', 'Retiring', 'topdown-bad-spec', 'frontend bound' -> the tma_* name of
    one of the level-1/level-2 nodes, or None."""
    key = re.sub(r"[\s\-]+", "_", name.strip().lstrip("%").strip().lower())
    for prefix in ("tma_", "topdown_"):
        key = key.removeprefix(prefix)
    tma = "tma_" + _TOPDOWN_ALIASES.get(key, key)
    return tma if tma in TOPDOWN_L1 + TOPDOWN_L2 else None


def from_perf(ps: PerfStat, init_only: PerfStat | None, kernel_name: str, reps: int, *,
              topdown: Sequence[PerfStat] = ()) -> tuple[KernelProfile, dict[str, Any]]:
    """Per-call counts of a `perf stat` run of `reps` calls, less the init-only run; plus IPC
    and the top-down percentages of `ps` and the `-M TopdownL*` runs in `topdown`.

    The dict holds the collection notes: "missing" (events not supported or not counted, in
    either run), "multiplexed" (event -> lowest % running) and, where subtracting left less
    than nothing (noise on a tiny kernel), "below_init" (kept as 0)."""
    if reps < 1:
        raise ValueError(f"reps must be >= 1 for per-call perf counts, got {reps}")
    counted, base = _counted(ps), _counted(init_only) if init_only is not None else None
    missing = [name for name in _names(ps) if name not in counted]
    metrics: dict[str, Metric] = {}
    below: list[str] = []
    for name, (value, unit) in counted.items():
        if base is not None:
            if name not in base:  # cannot take the init away: unknown, not a guess
                missing.append(name)
                continue
            value -= base[name][0]
            if value < 0:
                below.append(name)
                value = 0.0
        metrics[name] = Metric(name, value / reps, perf_unit(name, unit))
    cycles, insts = metrics.get("cycles"), metrics.get("instructions")
    if cycles and insts and isinstance(cycles.value, float) and cycles.value > 0:
        metrics["IPC"] = Metric("IPC", float(insts.value) / cycles.value, "inst/cycle")
    for name, pct in topdown_percents((ps, *topdown)).items():
        metrics[name] = Metric(name, pct, "%")
    notes: dict[str, Any] = {"missing": missing, "multiplexed": _multiplexed(
        (ps, *([init_only] if init_only is not None else []), *topdown))}
    if below:
        notes["below_init"] = below
    return KernelProfile(name=kernel_name, mangled=kernel_name, index=0, metrics=metrics), notes


def perf_unit(event: str, unit: str) -> str:
    """perf's unit when it prints one (task-clock: msec), else one read from the event name."""
    if unit:
        return unit
    for key, name in (("miss", "miss"), ("cycles", "cycle"), ("instructions", "inst"),
                      ("branches", "branch"), ("loads", "access"), ("stores", "access"),
                      ("references", "access"), ("slots", "slot")):
        if key in event:
            return name
    return "count"


def topdown_percents(stats: Sequence[PerfStat]) -> dict[str, float]:
    """Top-down nodes in percent: perf's own metric values first, else raw `topdown-*` slot
    events over `slots` (level-2 siblings perf has no event for as parent minus sibling)."""
    found: dict[str, float] = {}
    raw: dict[str, float] = {}
    for st in stats:
        for name, value in st.metrics.items():
            if (tma := topdown_name(name)) is not None:
                found.setdefault(tma, value)
        for c in st.counts:
            if c.metric_value is not None and (tma := topdown_name(c.metric_unit)) is not None:
                found.setdefault(tma, c.metric_value)
        counted = _counted(st)
        slots = counted.get("slots", (0.0, ""))[0]
        for name, (value, _) in counted.items():
            if slots > 0 and name.startswith("topdown-") and (tma := topdown_name(name)):
                raw.setdefault(tma, 100.0 * value / slots)
    for child, parent, sibling in _TOPDOWN_REST:
        if child not in raw and parent in raw and sibling in raw:
            raw[child] = max(0.0, raw[parent] - raw[sibling])
    return {**raw, **found}


def _counted(ps: PerfStat) -> dict[str, tuple[float, str]]:
    """Counted events by plain name; hybrid CPUs' cpu_core/X/ and cpu_atom/X/ add up."""
    out: dict[str, tuple[float, str]] = {}
    for c in ps.counts:
        if c.value is not None:
            name = event_name(c.event)
            previous = out.get(name, (0.0, c.unit))
            out[name] = (previous[0] + c.value, previous[1] or c.unit)
    return out


def _names(ps: PerfStat) -> list[str]:
    return list(dict.fromkeys(event_name(c.event) for c in ps.counts))


def _multiplexed(stats: Sequence[PerfStat]) -> dict[str, float]:
    out: dict[str, float] = {}
    for st in stats:
        for c in st.counts:
            if c.multiplexed and c.running_pct is not None:
                name = event_name(c.event)
                out[name] = min(out.get(name, 100.0), c.running_pct)
    return out


# --- the profile ---------------------------------------------------------------------------------

def build_profile(kernel: KernelProfile, *, reader: str, report: str, collector: str,
                  reason: str, cpu: str, reps: int, tool_version: str,
                  notes: dict[str, Any] | None = None) -> Profile:
    """The Profile of one CPU kernel; `collection` says how it was measured (and, for
    cachegrind, that the figures are simulated)."""
    notes = dict(notes or {})
    collection: dict[str, Any] = {
        "target": "cpu", "collector": collector, "simulated": collector == "cachegrind",
        "reason": reason, "cpu": cpu, "reps": reps, "tool_version": tool_version,
        "missing": list(notes.pop("missing", [])),
        "multiplexed": dict(notes.pop("multiplexed", {})),
    }
    collection.update(notes)
    return Profile(kernels=(kernel,), reader=reader, report=report, ncu_version="",
                   collection=collection, collector=collector)
