"""The normalized profile: what ncu measured for each kernel, in one JSON-serializable shape.

Both readers (ncu's Python `ncu_report` module and the `ncu --import --csv` fallback) produce a
*raw dump* (plain JSON: kernels with metrics, rules and source rows); `from_raw` turns a dump into
a Profile. Profiles are saved as `profile.json` beside the `.ncu-rep` they came from.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
MetricValue = float | str


@dataclass(frozen=True)
class Metric:
    name: str
    value: MetricValue
    unit: str


@dataclass(frozen=True)
class RuleResult:
    """One piece of ncu's own guidance (a rule's message in a section)."""

    section: str
    rule: str
    kind: str  # OPT, WRN, INF, ERR (ncu's message types)
    message: str
    speedup: float | None = None  # ncu's estimated speedup, in percent
    speedup_type: str = ""  # "global" or "local"
    title: str = ""  # the message's title (ncu_report only; the CSV page has none)


@dataclass(frozen=True)
class SourceLine:
    """A line of CUDA source with what the sampler and the counters attributed to it."""

    file: str
    line: int
    samples: int  # warp-state samples at this line (all reasons)
    stalls: dict[str, int]  # reason -> samples, largest first
    instructions: float  # warp-level instructions executed
    text: str = ""


@dataclass(frozen=True)
class KernelProfile:
    name: str  # demangled function name, without parameters
    mangled: str
    index: int  # position in the report
    metrics: dict[str, Metric]
    rules: tuple[RuleResult, ...] = ()
    hotspots: tuple[SourceLine, ...] = ()
    display_name: str = ""  # the full demangled signature

    def value(self, name: str) -> float | None:
        """A numeric metric's value, or None when it was not collected (or is not a number)."""
        metric = self.metrics.get(name)
        if metric is None or isinstance(metric.value, str):
            return None
        return float(metric.value)

    def first(self, *names: str) -> float | None:
        """The value of the first of `names` that was collected (names change across ncu)."""
        for name in names:
            value = self.value(name)
            if value is not None:
                return value
        return None

    def group(self, prefix: str) -> dict[str, Metric]:
        return {k: m for k, m in self.metrics.items() if k.startswith(prefix)}


@dataclass(frozen=True)
class Profile:
    kernels: tuple[KernelProfile, ...]
    reader: str  # "ncu_report" or "csv"
    report: str | None = None  # the .ncu-rep it was read from
    ncu_version: str = ""
    collection: dict[str, Any] = field(default_factory=dict)  # how it was collected, if by us
    # the collector that measured it ("ncu", "perf", "cachegrind"): it picks the diagnosis
    # rules; "" in files written before it was recorded (pragma_ncu.backends.collector_of)
    collector: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["schema"] = SCHEMA_VERSION
        return data

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1, sort_keys=False) + "\n")


def profile_from_json(data: dict[str, Any]) -> Profile:
    """Inverse of Profile.to_json (used for profile.json files)."""
    if data.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"profile schema {data.get('schema')!r}, expected {SCHEMA_VERSION}")
    kernels = tuple(_kernel_from_json(k) for k in data["kernels"])
    return Profile(kernels, data["reader"], data.get("report"), data.get("ncu_version", ""),
                   data.get("collection") or {}, str(data.get("collector") or ""))


def _kernel_from_json(k: dict[str, Any]) -> KernelProfile:
    return KernelProfile(
        name=k["name"], mangled=k["mangled"], index=int(k["index"]),
        metrics={n: Metric(**m) for n, m in k["metrics"].items()},
        rules=tuple(RuleResult(**r) for r in k.get("rules", ())),
        hotspots=tuple(SourceLine(**s) for s in k.get("hotspots", ())),
        display_name=k.get("display_name", ""),
    )

