"""The nouns of `knowledge build`: documents crawled, segments cut from them, summaries of segments.

Document ──adapter.parse──▶ Segment ──summarizer──▶ SegmentSummary (MetricNote per metric)
                                                          └──synthesize──▶ MetricEntry

All are frozen and round-trip through JSON, because the build caches them by content hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any


def digest(*parts: str) -> str:
    """A stable content hash of some strings (sha256, hex)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


@dataclass(frozen=True)
class Document:
    """One thing a source adapter read whole: a file's text, a command's output, a web page."""

    origin: str  # path, command line or URL
    text: str
    title: str = ""


@dataclass(frozen=True)
class Segment:
    """One self-contained piece of documentation: a page section, a metric, a rule, an event."""

    source: str  # the adapter's name, e.g. "ncu-docs"
    profiler: str  # "ncu" or "perf"
    kind: str  # one of SEGMENT_KINDS
    title: str  # the heading, metric, section or event name
    text: str
    origin: str  # path#anchor, command line or URL
    content_hash: str  # of profiler, kind, title and text: where it came from does not matter

    @classmethod
    def make(cls, source: str, profiler: str, kind: str, title: str, text: str,
             origin: str) -> Segment:
        """A segment with its content hash computed."""
        title, text = title.strip(), text.strip()
        return cls(source, profiler, kind, title, text, origin,
                   digest(profiler, kind, title, text))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Segment:
        return cls(**{k: str(data[k]) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class MetricNote:
    """What one segment says about one metric (or perf event)."""

    name: str  # base name: no rollup or sub-metric suffix (dram__bytes_read, not ....sum)
    title: str = ""
    meaning: str = ""
    unit: str = ""
    hardware_unit: str = ""
    indicates: tuple[str, ...] = ()  # BOTTLENECKS keys
    reading: str = ""
    hints: tuple[str, ...] = ()
    group: str = ""
    aliases: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MetricNote:
        values = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        for key in ("indicates", "hints", "aliases"):
            values[key] = tuple(values.get(key, ()))
        return cls(**values)


@dataclass(frozen=True)
class SegmentSummary:
    """The structured reading of one segment, by the LLM or by the rules."""

    segment_hash: str
    method: str  # "llm" or "rules"
    notes: tuple[MetricNote, ...]
    model: str = ""  # the LLM's name when method is "llm"
    fallback_reason: str = ""  # why the rules answered although an LLM was asked
    tokens: int = 0  # LLM tokens spent (prompt + completion)

    @property
    def fell_back(self) -> bool:
        return bool(self.fallback_reason)

    def to_json(self) -> dict[str, Any]:
        return {"segment_hash": self.segment_hash, "method": self.method, "model": self.model,
                "fallback_reason": self.fallback_reason, "tokens": self.tokens,
                "notes": [n.to_json() for n in self.notes]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SegmentSummary:
        return cls(str(data["segment_hash"]), str(data["method"]),
                   tuple(MetricNote.from_json(n) for n in data["notes"]),
                   str(data.get("model", "")), str(data.get("fallback_reason", "")),
                   int(data.get("tokens", 0)))
