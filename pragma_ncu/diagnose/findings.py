"""What a diagnosis says: the roofline position, ranked findings with evidence, ncu's advice."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pragma_ncu.profile.profiles import RuleResult, SourceLine


@dataclass(frozen=True)
class Evidence:
    """One metric value a finding rests on, with what it is compared against."""

    metric: str
    value: float | str
    unit: str
    note: str = ""  # e.g. "ideal 32 B/sector", "limiter: registers"


@dataclass(frozen=True)
class Finding:
    """One candidate explanation of lost time. `score` (0..1) estimates the share of the
    kernel's time it accounts for, so findings from different detectors can be ranked."""

    bottleneck: str  # a key of pragma_ncu.knowledge.schema.BOTTLENECKS
    title: str
    score: float
    summary: str
    evidence: tuple[Evidence, ...]
    actions: tuple[str, ...] = ()
    ncu_rules: tuple[str, ...] = ()  # ncu rules that say the same thing


@dataclass(frozen=True)
class LowerPrecision:
    """Where the same math would stand on tensor cores at a lower precision: for an FP32
    GEMM-like kernel on the SIMT pipes, the least its work would take on `unit` (its DRAM
    traffic as now), from the datasheet's rates. A separate figure, labelled as such: it never
    replaces the FP32 roofline, and whether the results tolerate the precision is the user's
    call."""

    unit: str  # "TF32 tensor cores"
    time_ns: float
    speedup: float  # the kernel's duration / time_ns: the most it could gain
    rate_ratio: float  # the datasheet's rate on `unit` / its FP32 FMA rate
    gpu: str  # whose datasheet

    def text(self) -> str:
        return (f"{self.unit} >= {self.time_ns / 1000:,.4g} µs (up to {self.speedup:.1f}x; "
                f"{self.rate_ratio:.1f}x FP32's rate on the {self.gpu} datasheet)")


@dataclass(frozen=True)
class Roofline:
    duration_ns: float | None
    dram_bytes: float | None
    achieved_gbps: float | None
    dram_peak_pct: float | None  # ncu's DRAM throughput, % of its peak
    ceiling_gbps: float | None  # the measured copy ceiling, when known
    ceiling_source: str  # "measured copy" or "ncu DRAM peak" or ""
    compute_pct: float | None  # sm__throughput, % of peak
    top_pipe: str
    top_pipe_pct: float | None
    binding: str = ""  # the busiest unit while SMs are active: DRAM, L2, L1, issue or a pipe
    binding_pct: float | None = None  # its utilization, % of peak while SMs are active
    at_roofline: bool = False  # the binding unit runs at its practical ceiling
    flops: float | None = None  # counted by ncu (FP32 + FP64 + tensor estimate)
    flop_rate: float | None = None  # FLOP/s achieved
    compute_name: str = ""  # the compute ceiling the counted FLOPs are judged against
    compute_ceiling: float | None = None  # its measured rate, FLOP/s (when cached)
    roofline_fraction: float | None = None  # attainable roofline time / duration
    bound_by: str = ""  # which ceiling sets that roofline
    # The time the kernel cannot beat doing the same work, over its duration: the largest of
    # what each ceiling the report can judge by needs (bytes at the copy ceiling, FLOPs at the
    # compute ceiling, a pipe's work at its peak); None when the report shows none of them.
    attainable_fraction: float | None = None
    attainable_by: str = ""  # the ceiling that sets it
    # For an FP32 GEMM-like kernel on SIMT pipes: the same math on tensor cores at a lower
    # precision (TF32, BF16), a separate figure beside the FP32 roofline
    lower_precision: tuple[LowerPrecision, ...] = ()

    def lower_precision_text(self) -> str:
        """'at a lower precision, if the results allow it: TF32 tensor cores >= ...; BF16 ...'."""
        if not self.lower_precision:
            return ""
        return ("at a lower precision, if the results allow it (beside, not instead of, the "
                "FP32 roofline): " + "; ".join(p.text() for p in self.lower_precision))

    @property
    def ceiling_fraction(self) -> float | None:
        if self.achieved_gbps is None or not self.ceiling_gbps:
            return None
        return self.achieved_gbps / self.ceiling_gbps


@dataclass(frozen=True)
class Gap:
    """A cause a report could not assess (or only inferred through a proxy), and the ncu
    sections that carry what it lacks."""

    cause: str
    missing: tuple[str, ...]  # quantities (the CUDA rules' quantities.QUANTITIES)
    sections: tuple[str, ...]
    inferred: bool = False  # assessed through a weaker proxy only

    def text(self) -> str:
        how = "only inferred" if self.inferred else "not assessed"
        return f"{self.cause}: {how}; needs {', '.join(self.missing)}"


@dataclass(frozen=True)
class Citation:
    metric: str
    entry: str  # the compendium entry's name
    title: str
    meaning: str
    source: str


@dataclass(frozen=True)
class Diagnosis:
    kernel: str
    classification: str  # the top finding's bottleneck
    roofline: Roofline
    findings: tuple[Finding, ...]
    guidance: tuple[RuleResult, ...]  # ncu's own advice, by estimated speedup
    hotspots: tuple[SourceLine, ...]
    citations: tuple[Citation, ...]
    uncited: tuple[str, ...] = ()  # mentioned metrics the compendium has no entry for
    not_assessed: tuple[Gap, ...] = ()  # causes this collection could not assess
    collect_command: str = ""  # the ncu command that would collect what is missing
    hotspot_counts: str = "samples"  # what a hot line's counts are, in the collector's terms

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["roofline"]["ceiling_fraction"] = self.roofline.ceiling_fraction
        return data
