"""The signals of one kernel, read once for every detector: each quantity of `quantities` that
the report carries, the warp-stall breakdown from whichever
source has it, and utilizations put on one footing.

Utilizations: ncu reports DRAM and L2 over elapsed time, L1 and the pipes over the cycles the
SMs were active. When SMs idle (a small grid, a tail, a short kernel) an elapsed figure
understates how busy a unit was while there was work, so every detector compares the *active*
forms, and scales a per-active-SM loss by the active fraction to get a share of the kernel's
time.
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.backends.cuda.diagnosis import quantities as q
from pragma_ncu.diagnose.findings import Evidence
from pragma_ncu.profile.profiles import KernelProfile

STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
SAMPLED_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
OLD_PREFIX = "smsp__warp_issue_stalled_"  # ncu 2019-2021: ..._per_warp_active.pct
OLD_SUFFIX = "_per_warp_active.pct"
PIPES = {  # pipe -> bottleneck when it is the limit
    "FMA": "compute_fma", "ALU": "compute_fma", "XU": "compute_sfu", "FP64": "compute_fp64",
    "Tensor": "tensor_core",
}
# Occupancy limiter metric -> bottleneck. On a tie the first listed wins: an unused resource
# reports the hardware's block limit as its own, so the block and warp limits come first.
LIMITERS = {
    "launch__occupancy_limit_blocks": "occupancy_block",
    "launch__occupancy_limit_warps": "occupancy_block",
    "launch__occupancy_limit_registers": "occupancy_registers",
    "launch__occupancy_limit_shared_mem": "occupancy_shared",
}
L2_CARRYING = "L2 (DRAM traffic)"  # the unit name when L2 passing DRAM traffic is the busier
NOT_STALLS = ("selected",)  # "selected" is the issue itself, not a wait
# Stall reasons where a warp waits for something to finish (memory, a dependency, a barrier,
# a fence, a branch, an instruction fetch) rather than for a busy unit: these explain the idle
# time of a unit below its peak. The others (not_selected, math_pipe_throttle, mio_throttle,
# lg_throttle, tex_throttle, dispatch_stall, misc) say a unit or the scheduler is busy.
WAIT_STALLS = ("long_scoreboard", "short_scoreboard", "wait", "barrier", "membar", "drain",
               "branch_resolving", "no_instruction", "sleeping", "imc_miss")
PIPE_NEAR_ISSUE = 0.1  # a pipe this close to the issue rate is what the issue rate serves
L2_BEYOND_DRAM = 0.15  # L2 is its own limit only when it does this much more than DRAM's share
L2_REUSE_HITS = 0.6  # ... and serves hits: a streaming kernel's L2 hit rate is about 0.5
# ... or, where the report has no hit rate (ncu's default set), serves each sector it fills
# from DRAM this many times: a streaming kernel's ratio is 1.0 (copies 1.03-1.04 on the H200),
# re-read data 2-18 (the corpus' L2-bound and local-memory kernels)
L2_REUSE_RATIO = 1.5


def stall_name(reason: str) -> str:
    return f"{STALL_PREFIX}{reason}{STALL_SUFFIX}"


@dataclass(frozen=True)
class Stalls:
    """Warp stall cycles (or samples) by reason, and the metric family they came from."""

    by_reason: dict[str, float]
    source: str = ""

    @property
    def total(self) -> float:
        return sum(v for k, v in self.by_reason.items() if k not in NOT_STALLS) or 0.0

    def share(self, *reasons: str) -> float:
        total = self.total
        return sum(self.by_reason.get(r, 0.0) for r in reasons) / total if total else 0.0

    @property
    def waiting(self) -> float:
        """The share of stalls where warps wait for something to finish (WAIT_STALLS)."""
        return self.share(*WAIT_STALLS)

    def top(self, count: int = 3) -> list[tuple[str, float]]:
        items = [(k, v) for k, v in self.by_reason.items() if k not in NOT_STALLS]
        return sorted(items, key=lambda kv: -kv[1])[:count]

    def metric(self, reason: str) -> str:
        """The metric that carries `reason` in this profile's stall family."""
        if self.source == "sampled":
            return SAMPLED_PREFIX + reason
        if self.source == "old":
            return f"{OLD_PREFIX}{reason}{OLD_SUFFIX}"
        if self.source == "hot lines":
            return f"source-line samples ({reason})"
        return stall_name(reason)


def _family(k: KernelProfile, prefix: str, suffix: str) -> dict[str, float]:
    out = {}
    for name, m in k.group(prefix).items():
        if name.endswith(suffix) and not isinstance(m.value, str) and "_not_issued" not in name:
            out[name[len(prefix):len(name) - len(suffix) if suffix else None]] = float(m.value)
    return out


def stalls(kernel: KernelProfile) -> Stalls | None:
    """The stall breakdown, from (in order) WarpStateStats' per-issue ratios, the PC sampler's
    totals (SourceCounters), an older ncu's per-warp percentages, or the hot source lines."""
    for prefix, suffix, source in ((STALL_PREFIX, STALL_SUFFIX, "warp state"),
                                   (SAMPLED_PREFIX, "", "sampled"),
                                   (OLD_PREFIX, OLD_SUFFIX, "old")):
        found = _family(kernel, prefix, suffix)
        if sum(v for r, v in found.items() if r not in NOT_STALLS) > 0:
            return Stalls(found, source)
    lines: dict[str, float] = {}
    for line in kernel.hotspots:
        for reason, samples in line.stalls.items():
            lines[reason] = lines.get(reason, 0.0) + samples
    return Stalls(lines, "hot lines") if sum(lines.values()) > 0 else None


@dataclass(frozen=True)
class Signals:
    """Everything the detectors read about one kernel."""

    k: KernelProfile
    readings: dict[str, q.Reading]
    stalls: Stalls | None
    resources: dict[str, float]  # the build's ptxas report, when the collection recorded it
    ceiling_gbps: float | None = None  # this device's measured copy ceiling, when known

    @staticmethod
    def of(kernel: KernelProfile, resources: dict[str, float] | None = None,
           ceiling_gbps: float | None = None) -> Signals:
        readings = {}
        for quantity in q.QUANTITY_LIST:
            found = quantity.read(kernel)
            if found is not None:
                readings[quantity.name] = found
        return Signals(kernel, readings, stalls(kernel), dict(resources or {}), ceiling_gbps)

    def has(self, name: str) -> bool:
        return name in self.readings

    def get(self, name: str, default: float | None = None) -> float | None:
        found = self.readings.get(name)
        return found.value if found is not None else default

    def val(self, name: str, default: float = 0.0) -> float:
        found = self.readings.get(name)
        return found.value if found is not None else default

    def ev(self, name: str, note: str = "", scale: float = 1.0, unit: str = "") -> Evidence:
        """Evidence from a quantity, naming the metric it was read from."""
        found = self.readings.get(name)
        if found is None:
            return Evidence(q.QUANTITIES[name].sources[0].label, "n/a", "", note)
        return Evidence(found.metric, round(found.value * scale, 4), unit or found.unit, note)

    def ev_metric(self, name: str, note: str = "") -> Evidence:
        m = self.k.metrics.get(name)
        if m is None:
            return Evidence(name, "n/a", "", note)
        return Evidence(name, m.value, m.unit, note)

    # -- utilizations on one footing ------------------------------------------------------
    @property
    def active(self) -> float:
        """Fraction of elapsed time the average SM had work; 1 when the report lacks it."""
        return max(self.val("sm_active", 1.0), 1e-6)

    def per_active(self, name: str) -> float:
        """An elapsed-time utilization (dram, l2, sm) over the SMs' active time, 0..1."""
        return min(1.0, self.val(name) / self.active)

    def pipes(self) -> dict[str, float]:
        return {p: v for p in PIPES if (v := self.get(f"pipe_{p}")) is not None}

    def top_pipe(self) -> tuple[str, float]:
        found = self.pipes()
        if not found:
            return "", 0.0
        pipe = max(found, key=lambda p: found[p])
        return pipe, found[pipe]

    def busiest(self) -> tuple[str, float]:
        """The busiest unit while the SMs are active: a memory level, a pipe or the issue
        slots. Its utilization is how much of the active time some limit was reached."""
        memory, load = self.memory_traffic()
        l2 = self.per_active("l2") if self.l2_serves_its_own() else 0.0  # else it is `memory`
        units = {memory: load, "L2": l2, "L1": self.val("l1"), "issue": self.val("issue"),
                 "LSU": self.val("pipe_LSU"), **self.pipes()}
        name = max(units, key=lambda u: units[u])
        pipe, busy = self.top_pipe()
        if name == "issue" and pipe and busy >= units["issue"] - PIPE_NEAR_ISSUE:
            name = pipe  # one instruction per cycle is also the FMA pipe's rate: name the pipe
        return name, units[name]

    def l2_serves_its_own(self) -> bool:
        """Whether the L2 does work of its own beyond passing DRAM traffic through: clearly
        busier than DRAM, and (where the report has it) hitting: a streaming kernel's stores
        hit on write-allocate and its loads miss, about half; re-read data hits far more."""
        if self.has("dram") and self.val("l2") < self.val("dram") + L2_BEYOND_DRAM:
            return False
        if self.has("l2_hit_rate"):
            return self.val("l2_hit_rate") >= L2_REUSE_HITS
        return not self.has("l2_reuse") or self.val("l2_reuse") >= L2_REUSE_RATIO

    def memory_traffic(self) -> tuple[str, float]:
        """The load of the traffic between the SMs and DRAM while the SMs are active: DRAM's,
        or the L2's where it only carries that traffic and is busier (stores it absorbs, the
        crossing between L2 partitions), named for the unit it was read from."""
        dram, l2 = self.per_active("dram"), self.per_active("l2")
        if self.has("l2") and l2 > dram and not self.l2_serves_its_own():
            return L2_CARRYING, l2
        return "DRAM", dram

    @property
    def exposure(self) -> float:
        """Fraction of the active time no unit was near its limit: latency not hidden."""
        return max(0.0, 1.0 - self.busiest()[1])

    @property
    def lanes(self) -> float:
        """Active lanes per warp instruction / 32 (1 when the report lacks it)."""
        return min(1.0, self.val("lanes", 32.0) / 32.0)

    def stall_share(self, *reasons: str) -> float:
        return self.stalls.share(*reasons) if self.stalls else 0.0

    def stall_ev(self, reason: str, note: str = "") -> Evidence:
        if self.stalls is None:
            return Evidence(stall_name(reason), "n/a", "", note)
        share = self.stalls.share(reason)
        return Evidence(self.stalls.metric(reason), round(self.stalls.by_reason.get(reason, 0.0),
                                                          4), "",
                        (note + "; " if note else "") + f"{share:.0%} of stalls")


def occupancy_limiter(kernel: KernelProfile) -> tuple[str, float] | None:
    """The launch__occupancy_limit_* metric with the fewest blocks per SM, and that count."""
    limits = [(name, kernel.value(name)) for name in LIMITERS]
    present = [(n, v) for n, v in limits if v is not None]
    if not present:
        return None
    return min(present, key=lambda nv: (nv[1], list(LIMITERS).index(nv[0])))
