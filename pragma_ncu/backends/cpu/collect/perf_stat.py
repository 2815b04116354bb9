"""Reading `perf stat` output: CSV (`-x SEP`), JSON (`-j`) and the default table, one count
per event.

What a count could not be is kept as such: `<not supported>` (the CPU or the virtual machine
has no such counter) and `<not counted>` (the event never got a counter) are *missing*, never
zero. A count whose counter ran for only part of the time (`pcnt-running` < 100, perf's
multiplexing) is flagged: perf scales it up, so it is an estimate. Metric-only lines (from
`-M GROUP` or `--topdown`) are kept as derived metrics by their name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

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
    """CSV, JSON or the default table, whichever `text` is."""
    body = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if body and body[0].lstrip().startswith("{"):
        return parse_json(text)
    if any(_TABLE_HEAD.search(ln) or _TABLE_COUNT.match(ln) for ln in body[:3]):
        return parse_table(text)
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
        if not value:  # a metric-only line ",,,,,12.3,% tma_frontend_bound", or a metric
            if mvalue and munit:  # group's header ",225849327050,100.00,,,,TopdownL1"
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


# The default table: "  14,641,415,307  cycles:u  #  3.020 GHz  (74.92%)", a "#" continuation
# line carrying another derived figure, or a metric group's line "TopdownL1  #  68.7 %  tma_...".
_TABLE_HEAD = re.compile(r"Performance counter stats for")
_TABLE_COUNT = re.compile(
    r"^\s*(?P<value><not supported>|<not counted>|[\d,]+(?:\.\d+)?)\s+"
    r"(?:(?P<unit>msec|usec|nsec|ns|us|ms|Joules|MiB|Bytes)\s+)?(?P<event>\S+)"
    r"(?P<rest>.*)$")
_TABLE_METRIC = re.compile(r"#\s*(?P<value>-?[\d,]*\.?\d+)\s*(?P<unit>%?\s*[^(]*?)\s*"
                           r"(?:\((?P<pct>[\d.]+)%\))?\s*$")
_TABLE_PCT = re.compile(r"\((?P<pct>[\d.]+)%\)\s*$")


def parse_table(text: str) -> PerfStat:
    """`perf stat` without -x or -j: the human table (thousands separators as in the C locale;
    "(74.92%)" at a line's end is the share of the run its counter was on)."""
    counts: list[PerfCount] = []
    metrics: dict[str, float] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#") or "seconds time elapsed" in line \
                or "seconds user" in line or "seconds sys" in line or _TABLE_HEAD.search(line):
            continue
        m = _TABLE_COUNT.match(line)
        if m is None or m.group("event") == "#":
            _table_metric(line, metrics)
            pct = _TABLE_PCT.search(line)  # a continuation line ends its count's line
            if pct and counts and counts[-1].running_pct is None:
                counts[-1] = replace(counts[-1], running_pct=float(pct.group("pct")))
            continue
        rest = m.group("rest")
        derived = _TABLE_METRIC.search(rest)
        pct = _TABLE_PCT.search(rest)
        mvalue = munit = ""
        if derived is not None:
            mvalue, munit = derived.group("value").replace(",", ""), derived.group("unit")
            _table_metric(rest, metrics)
        counts.append(_count(m.group("event"), m.group("value").replace(",", ""),
                             m.group("unit") or "", pct.group("pct") if pct else "", mvalue,
                             munit.strip()))
    if not counts and not metrics:
        raise PerfStatError("no counts found: not `perf stat` output")
    return PerfStat(tuple(counts), metrics)


def _table_metric(line: str, metrics: dict[str, float]) -> None:
    """A "#  68.7 %  tma_backend_bound" figure is a named metric; "#  3.020 GHz" is not."""
    m = _TABLE_METRIC.search(line)
    if m is not None and m.group("unit").startswith("%"):
        name = m.group("unit").lstrip("%").strip()
        if name and " " not in name:
            metrics[name] = float(m.group("value").replace(",", ""))


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
