"""What a diagnosis says: the roofline position, ranked findings with evidence, ncu's advice."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pragma_ncu.profile.model import RuleResult, SourceLine


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

    @property
    def ceiling_fraction(self) -> float | None:
        if self.achieved_gbps is None or not self.ceiling_gbps:
            return None
        return self.achieved_gbps / self.ceiling_gbps


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

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["roofline"]["ceiling_fraction"] = self.roofline.ceiling_fraction
        return data
