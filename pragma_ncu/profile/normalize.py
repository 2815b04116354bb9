"""Raw dump (from either reader) -> Profile: typed values, ncu's rule fields decoded, hot lines."""

from __future__ import annotations

import math
import re
from typing import Any

from pragma_ncu.profile.demangle import function_name
from pragma_ncu.profile.profiles import KernelProfile, Metric, Profile, RuleResult, SourceLine

MESSAGE_TYPES = {"0": "NONE", "1": "INF", "2": "OPT", "3": "WRN", "4": "ERR"}
SPEEDUP_TYPES = {"1": "local", "2": "global"}
_MARKUP = re.compile(r"@(\w+):(?:[^@:]*:)?([^@]*)@")  # @section:Id:Shown Name@ -> Shown Name
_STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
HOTSPOT_LINES = 12


def from_raw(raw: dict[str, Any], collection: dict[str, Any] | None = None,
             ncu_version: str = "") -> Profile:
    kernels = tuple(_kernel(k) for k in raw.get("kernels", ()))
    return Profile(kernels, str(raw.get("reader", "")), raw.get("report") or None, ncu_version,
                   collection or {}, collector="ncu")


def _kernel(k: dict[str, Any]) -> KernelProfile:
    metrics = {}
    for name, (value, unit) in k.get("metrics", {}).items():
        if ":" in name:  # "breakdown:..." and "group:..." are ncu_report-only listings
            continue
        if isinstance(value, bool):
            value = int(value)
        if not_a_number(value):
            continue
        metrics[name] = Metric(name, float(value) if isinstance(value, int | float) else
                               str(value), str(unit or ""))
    display = str(k.get("display_name") or "")
    # The function with its template arguments: ncu_report's default name drops them
    # ("work" for every work<N>), which would show template instantiations as one kernel.
    name = function_name(display) if "<" in display else str(k.get("name") or "")
    return KernelProfile(
        name=name or str(k.get("mangled") or "?"), mangled=str(k.get("mangled") or ""),
        index=int(k.get("index", 0)), metrics=metrics,
        rules=tuple(_rule(r) for r in k.get("rules", ())),
        hotspots=hotspots(k.get("source", ())), display_name=str(k.get("display_name") or ""),
    )


def not_a_number(value: object) -> bool:
    """A value ncu could not compute (a derived metric divided by zero): NaN or infinite as a
    float from ncu_report, 'nan' or 'inf' as text in the CSV pages. Either reader's profile
    leaves it out, as a metric not collected, rather than hand a detector a number it cannot
    use or text where a number belongs."""
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, str) and value.strip().lower().lstrip("+-") in ("nan", "inf",
                                                                             "infinity")


def clean_message(text: str) -> str:
    """ncu_report keeps the GUI's link markup; the CSV page has the plain text."""
    return " ".join(_MARKUP.sub(lambda m: m.group(2), text).split())


def _rule(r: dict[str, Any]) -> RuleResult:
    kind = str(r.get("kind", ""))
    speedup_type = str(r.get("speedup_type", ""))
    speedup = r.get("speedup")
    return RuleResult(
        section=str(r.get("section", "")), rule=str(r.get("rule", "")),
        kind=MESSAGE_TYPES.get(kind, kind), message=clean_message(str(r.get("message", ""))),
        speedup=float(speedup) if isinstance(speedup, int | float) else None,
        speedup_type=SPEEDUP_TYPES.get(speedup_type, speedup_type),
        title=str(r.get("title", "")),
    )


def hotspots(rows: Any, limit: int = HOTSPOT_LINES) -> tuple[SourceLine, ...]:
    """The lines with the most stall samples (then instructions), largest first."""
    lines = []
    for row in rows:
        values = row.get("values", {})
        stalls = {name[len(_STALL_PREFIX):]: int(v) for name, v in values.items()
                  if name.startswith(_STALL_PREFIX) and not name.endswith("_not_issued") and v}
        lines.append(SourceLine(
            file=str(row["file"]), line=int(row["line"]),
            samples=int(values.get("smsp__pcsamp_sample_count", 0)),
            stalls=dict(sorted(stalls.items(), key=lambda kv: -kv[1])),
            instructions=float(values.get("inst_executed", 0.0)), text=str(row.get("text", "")),
        ))
    lines.sort(key=lambda s: (-s.samples, -s.instructions))
    return tuple(s for s in lines[:limit] if s.samples or s.instructions)
