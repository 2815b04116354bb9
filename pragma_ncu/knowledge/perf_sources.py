"""Source adapters for Linux perf (its event list and man pages) and for web pages (--online)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pragma_ncu.knowledge.htmltext import split_long
from pragma_ncu.knowledge.segments import Document, Segment
from pragma_ncu.knowledge.sources import MAX_SEGMENT_CHARS, CrawlContext, Gathered, html_segments

# Event kinds that say nothing about performance bottlenecks (kernel trace points, raw syntax).
_SKIPPED_TYPES = ("tracepoint", "raw hardware event descriptor", "hardware breakpoint", "sdt")


@dataclass(frozen=True)
class PerfEvent:
    """One event or metric of `perf list`."""

    name: str
    aliases: tuple[str, ...] = ()
    type: str = ""
    topic: str = ""
    description: str = ""
    expression: str = ""
    unit: str = ""
    pmu: str = ""


class PerfEvents:
    """`perf list -j` (JSON, perf ≥ 6.4), else `perf list --details` text: a segment per event."""

    name = "perf-events"
    profiler = "perf"
    version = "1"
    description = "perf list -j (or perf list --details): events and metrics of this CPU"

    def gather(self, ctx: CrawlContext) -> Gathered:
        result = ctx.run([ctx.perf, "list", "-j"], ctx.timeout_s)
        if result.missing:
            return Gathered(skipped="perf not found (install linux-tools/perf to add CPU events)")
        if result.ok and result.stdout.lstrip().startswith("["):
            return Gathered((Document("perf list -j", result.stdout, "perf events"),))
        result = ctx.run([ctx.perf, "list", "--details"], ctx.timeout_s)
        if not result.ok or not result.stdout.strip():
            detail = (result.stderr or "no output").strip().splitlines()[:1] or ["no output"]
            return Gathered(skipped=f"perf list failed (exit {result.returncode}): {detail[0]}")
        return Gathered((Document("perf list --details", result.stdout, "perf events"),))

    def parse(self, doc: Document) -> list[Segment]:
        events = (parse_perf_json(doc.text) if doc.text.lstrip().startswith("[")
                  else parse_perf_text(doc.text))
        segments: dict[str, Segment] = {}
        for event in events:
            if event.name not in segments:  # hybrid CPUs list an event once per core type
                segments[event.name] = Segment.make(self.name, self.profiler, "event",
                                                    event.name, _event_text(event), doc.origin)
        return list(segments.values())


def _event_text(event: PerfEvent) -> str:
    fields = [("Event", event.name), ("Aliases", ", ".join(event.aliases)),
              ("Type", event.type), ("Topic", event.topic), ("PMU", event.pmu),
              ("Unit", event.unit), ("Description", event.description),
              ("Expression", event.expression)]
    return "\n".join(f"{key}: {value}" for key, value in fields if value)


def _skipped(event_type: str) -> bool:
    lowered = event_type.lower()
    return any(kind in lowered for kind in _SKIPPED_TYPES)


def parse_perf_json(text: str) -> list[PerfEvent]:
    """Events of `perf list -j`: a JSON array of objects (EventName or MetricName, ...)."""
    try:
        items = json.loads(text)
    except json.JSONDecodeError:
        return []
    events = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        event = _json_event(item)
        if event is not None:
            events.append(event)
    return events


def _json_event(item: Mapping[str, Any]) -> PerfEvent | None:
    def get(*keys: str) -> str:
        return next((str(item[k]).strip() for k in keys if item.get(k)), "")

    name = get("EventName", "MetricName")
    kind = get("EventType") or ("Metric" if item.get("MetricName") else "")
    if not name or _skipped(kind) or ":" in name:
        return None
    alias = get("EventAlias")
    return PerfEvent(name=name, aliases=(alias,) if alias else (), type=kind,
                     topic=get("Topic", "MetricGroup"),
                     description=get("PublicDescription", "BriefDescription"),
                     expression=get("MetricExpr", "Encoding"), unit=get("ScaleUnit"),
                     pmu=get("Unit"))


_TYPED_EVENT = re.compile(r"^\s+(.*?)\s+\[([^\[\]]+)\]\s*$")  # name ... [Type], last bracket


def parse_perf_text(text: str) -> list[PerfEvent]:
    """Events of `perf list [--details]`: `  name [OR alias]  [Type]` lines, topic headers
    (`cache:`), descriptions and expressions as bracketed lines indented deeper."""
    events: list[PerfEvent] = []
    topic, metric_mode = "", False
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            _close(current, events)
            current = None
            metric_mode = metric_mode or line.strip().lower().startswith("metric groups")
            topic = "" if "pre-defined" in line or line.lower().startswith("metric groups") \
                else line.strip().rstrip(":")
            continue
        if line.startswith("    "):  # deeper: a description or expression of the event above
            _add_detail(current, line.strip())
            continue
        _close(current, events)
        match = _TYPED_EVENT.match(line)
        names, kind = (match.group(1), match.group(2)) if match else (line.strip(), "")
        current = _new_event(names, kind, topic, metric_mode)
    _close(current, events)
    return events


def _new_event(names: str, kind: str, topic: str, metric_mode: bool) -> dict[str, Any] | None:
    kind = kind.strip() or ("Metric" if metric_mode else "")
    parts = [p.strip() for p in names.split(" OR ")]
    if _skipped(kind) or not parts[0] or ":" in parts[0]:
        return None
    return {"name": parts[0], "aliases": tuple(parts[1:]), "type": kind, "topic": topic,
            "details": []}


def _add_detail(current: dict[str, Any] | None, text: str) -> None:
    if current is None:
        return
    details: list[str] = current["details"]
    if text.startswith("[") or not details:
        details.append(text.lstrip("[").rstrip("]").strip())
    else:  # a wrapped description
        details[-1] = f"{details[-1]} {text.rstrip(']').strip()}"


def _close(current: dict[str, Any] | None, events: list[PerfEvent]) -> None:
    if current is None:
        return
    details = current["details"]
    description = details[0] if details else ""
    unit_match = re.search(r"\bUnit: (\S+)", description)
    events.append(PerfEvent(
        name=current["name"], aliases=current["aliases"], type=current["type"],
        topic=current["topic"], description=re.sub(r"\s*\bUnit: \S+\s*$", "", description),
        expression=" ".join(details[1:]), pmu=unit_match.group(1) if unit_match else ""))


class PerfManPages:
    """perf's man pages (`man -P cat perf-stat`, ...): one segment per man-page section."""

    name = "perf-man"
    profiler = "perf"
    version = "1"
    description = "perf man pages (perf-stat, perf-list, perf-record)"
    pages = ("perf-stat", "perf-list", "perf-record")

    def gather(self, ctx: CrawlContext) -> Gathered:
        docs, warnings = [], []
        for page in self.pages:
            result = ctx.run([ctx.man, "-P", "cat", page], ctx.timeout_s)
            if result.missing:
                return Gathered(skipped="man not found (no perf man pages to read)")
            if result.ok and result.stdout.strip():
                docs.append(Document(f"man {page}", result.stdout, page))
            else:
                warnings.append(f"no man page {page}")
        if not docs:
            return Gathered(skipped="no perf man pages installed", warnings=tuple(warnings))
        return Gathered(tuple(docs), warnings=tuple(warnings))

    def parse(self, doc: Document) -> list[Segment]:
        segments = []
        for heading, body in man_sections(doc.text):
            if heading in ("SEE ALSO", "COPYRIGHT", "AUTHOR", "AUTHORS"):
                continue
            title = f"{doc.title or doc.origin}(1) \u203a {heading}"
            pieces = split_long(body, MAX_SEGMENT_CHARS)
            for i, piece in enumerate(pieces, 1):
                part = f"{title} (part {i})" if len(pieces) > 1 else title
                segments.append(Segment.make(self.name, self.profiler, "manpage", part, piece,
                                             f"{doc.origin}#{heading.lower().replace(' ', '-')}"))
        return segments


def man_sections(text: str) -> Iterable[tuple[str, str]]:
    """(HEADING, body) pairs of a formatted man page; overstrike and colour codes removed."""
    text = re.sub(r".\x08", "", text)
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    heading, body = "", list[str]()
    for line in text.splitlines():
        if re.fullmatch(r"[A-Z][A-Z0-9 ,/&-]*[A-Z0-9]", line.strip()) and not line[0].isspace():
            if heading and "\n".join(body).strip():
                yield heading, "\n".join(body).strip()
            heading, body = line.strip(), []
        elif heading:
            body.append(line.strip())
    if heading and "\n".join(body).strip():
        yield heading, "\n".join(body).strip()


class OnlinePages:
    """Web pages, fetched only with --online; a page that fails is a warning, not an error."""

    version = "1"

    def __init__(self, name: str, profiler: str, urls: tuple[str, ...]) -> None:
        self.name = name
        self.profiler = profiler
        self.urls = urls
        self.description = f"web pages for {profiler} (only with --online)"

    def gather(self, ctx: CrawlContext) -> Gathered:
        if not ctx.online:
            return Gathered(skipped="offline (pass --online to fetch it)")
        docs, warnings = [], []
        for url in self.urls:
            try:
                docs.append(Document(url, ctx.fetch(url, min(ctx.timeout_s, 60.0))))
            except (OSError, ValueError) as exc:
                warnings.append(f"could not fetch {url}: {exc}")
        return Gathered(tuple(docs), warnings=tuple(warnings))

    def parse(self, doc: Document) -> list[Segment]:
        return html_segments(self.name, self.profiler, doc)
