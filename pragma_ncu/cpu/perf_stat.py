"""Reading `perf stat` output: CSV (`-x SEP`) and JSON (`-j`), one count per event.

What a count could not be is kept as such: `<not supported>` (the CPU or the virtual machine
has no such counter) and `<not counted>` (the event never got a counter) are *missing*, never
zero. A count whose counter ran for only part of the time (`pcnt-running` < 100, perf's
multiplexing) is flagged: perf scales it up, so it is an estimate. Metric-only lines (from
`-M GROUP` or `--topdown`) are kept as derived metrics by their name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

NOT_SUPPORTED = "<not supported>"
NOT_COUNTED = "<not counted>"


class PerfStatError(ValueError):
    """The text is not `perf stat` output in a format this reader knows."""


@dataclass(frozen=True)
class PerfCount:
    event: str
    value: float | None  # None when the event was not supported or not counted
    unit: str = ""
    status: str = "counted"  # counted | not_supported | not_counted
    running_pct: float | None = None  # share of the run the counter was on (perf's scaling)
    metric_value: float | None = None  # perf's derived figure printed beside the count
    metric_unit: str = ""

    @property
    def multiplexed(self) -> bool:
        return self.status == "counted" and self.running_pct is not None \
            and self.running_pct < 100.0


@dataclass(frozen=True)
class PerfStat:
    counts: tuple[PerfCount, ...]
    metrics: dict[str, float]  # metric-only lines: name -> value (e.g. tma_frontend_bound)

    def value(self, event: str) -> float | None:
        found = next((c for c in self.counts if c.event == event), None)
        return found.value if found is not None else None

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(c.event for c in self.counts if c.value is None)

    @property
    def multiplexed(self) -> tuple[str, ...]:
        return tuple(c.event for c in self.counts if c.multiplexed)


def parse(text: str, sep: str = ",") -> PerfStat:
    """CSV or JSON, whichever `text` is."""
    body = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if body and body[0].lstrip().startswith("{"):
        return parse_json(text)
    return parse_csv(text, sep)


def parse_csv(text: str, sep: str = ",") -> PerfStat:
    """`perf stat -x SEP`: value, unit, event, run time, % running, metric value, metric unit."""
    counts: list[PerfCount] = []
    metrics: dict[str, float] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(sep)]
        if len(fields) < 3:
            raise PerfStatError(f"line {number}: {line!r} is not `perf stat -x{sep}` output "
                                "(value, unit, event, ...)")
        fields += [""] * (7 - len(fields))
        value, unit, event, _runtime, pct, mvalue, munit = fields[:7]
        if not value and not event:  # a metric-only line: ",,,,,12.3,% tma_frontend_bound"
            if mvalue and munit:
                metrics[_metric_name(munit)] = float(mvalue)
            continue
        counts.append(_count(event, value, unit, pct, mvalue, munit))
    return PerfStat(tuple(counts), metrics)


def parse_json(text: str) -> PerfStat:
    """`perf stat -j`: one JSON object per line."""
    counts: list[PerfCount] = []
    metrics: dict[str, float] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PerfStatError(f"line {number}: not JSON ({exc.msg}): {line[:80]!r}") from None
        event = str(obj.get("event", ""))
        value = str(obj.get("counter-value", ""))
        munit = str(obj.get("metric-unit", ""))
        mvalue = obj.get("metric-value")
        if not event and not value:
            if munit and mvalue is not None:
                metrics[_metric_name(munit)] = float(mvalue)
            continue
        counts.append(_count(event, value, str(obj.get("unit", "")),
                             str(obj.get("pcnt-running", "")),
                             "" if mvalue is None else str(mvalue), munit))
    return PerfStat(tuple(counts), metrics)


def _count(event: str, value: str, unit: str, pct: str, mvalue: str, munit: str) -> PerfCount:
    status = {NOT_SUPPORTED: "not_supported", NOT_COUNTED: "not_counted"}.get(value, "counted")
    number = _float(value) if status == "counted" else None
    if status == "counted" and number is None:
        raise PerfStatError(f"event {event!r}: count {value!r} is not a number")
    metric = _float(mvalue) if status == "counted" and munit else None
    return PerfCount(event, number, unit, status, _float(pct), metric,
                     munit if metric is not None else "")


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _metric_name(unit: str) -> str:
    """'%  tma_frontend_bound' -> 'tma_frontend_bound'; 'frontend bound' stays as it is."""
    words = unit.split()
    return words[-1] if words and words[0] in ("%", "%%") else unit.strip()
