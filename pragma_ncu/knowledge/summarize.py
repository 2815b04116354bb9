"""Stage 2 of `knowledge build`: each segment, on its own, into a SegmentSummary.

Two summarizers share one protocol. `RuleSummarizer` is deterministic (regex and keyword rules of
`extract`); `LLMSummarizer` asks an LLM through the prompt template `summarize_segment.j2`,
validates the JSON it gets, retries a malformed reply once, and otherwise answers with the rules,
marking the summary as a fallback. Each has a `key` that names how it summarizes: the build
caches a summary under the segment's hash and that key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import jinja2

from pragma_ncu.infra.errors import LLMBadReply, LLMUnavailable
from pragma_ncu.infra.llm import LLMConfig, LLMReply, Message, SchemaHint
from pragma_ncu.infra.resources import data_path
from pragma_ncu.knowledge import extract
from pragma_ncu.knowledge.schema import BOTTLENECKS
from pragma_ncu.knowledge.segments import MetricNote, Segment, SegmentSummary, digest

RULES_VERSION = "rules-v1"  # bump when the rules change, so cached rule summaries are redone
_REPLY_SCHEMA: SchemaHint = {"metrics": list}
_STRING_FIELDS = ("title", "meaning", "unit", "hardware_unit", "reading", "group")
_LIST_FIELDS = ("indicates", "hints", "aliases")


class Summarizer(Protocol):
    """Turns one segment into a summary; `key` changes whenever its output could."""

    @property
    def key(self) -> str:
        ...

    @property
    def uses_llm(self) -> bool:
        ...

    def summarize(self, segment: Segment) -> SegmentSummary:
        ...


class JsonLLM(Protocol):
    """What LLMSummarizer needs of a client (pragma_ncu.infra.llm.LLMClient, or a test double)."""

    config: LLMConfig

    def complete_json(self, messages: Sequence[Message],
                      schema_hint: SchemaHint | None = None) -> LLMReply:
        ...


class RuleSummarizer:
    """The deterministic extractor: metric names by pattern, units, bottlenecks by rules."""

    key = RULES_VERSION
    uses_llm = False

    def summarize(self, segment: Segment) -> SegmentSummary:
        reader = _READERS.get(segment.kind, _doc_notes)
        notes = tuple(n for n in reader(segment) if n.name)
        return SegmentSummary(segment.content_hash, "rules", notes)


def _fields(text: str) -> dict[str, str]:
    """`Key: value` lines of a segment written by an adapter."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep and re.fullmatch(r"[A-Z][\w ]*", key):
            out.setdefault(key, value.strip())
    return out


def _metric_notes(segment: Segment) -> list[MetricNote]:
    name = extract.base_metric(segment.title)
    first, _, _ = segment.text.partition("\n")
    description = first.split(": ", 1)[1].strip() if ": " in first else ""
    unit = _fields(segment.text).get("Unit", "") or extract.guess_unit(name, description)
    return [MetricNote(name=name, meaning=description, unit=unit,
                       hardware_unit=extract.hardware_unit(name),
                       indicates=extract.bottlenecks_for(name, description),
                       group=extract.group_for(name))]


def _section_notes(segment: Segment) -> list[MetricNote]:
    notes = []
    for line in segment.text.splitlines():
        if not line.startswith("- "):
            continue
        label, sep, metric = line[2:].rpartition(" = ")
        name = extract.base_metric(metric if sep else line[2:])
        reading = f"Shown as '{label}' in ncu's {segment.title} section." if label else ""
        notes.append(MetricNote(name=name, title=label, reading=reading,
                                hardware_unit=extract.hardware_unit(name),
                                indicates=extract.bottlenecks_for(name),
                                group=extract.group_for(name)))
    return notes


def _rule_notes(segment: Segment) -> list[MetricNote]:
    fields = _fields(segment.text)
    read = fields.get("Metrics read", "")
    about = fields.get("Description", "")
    advice = [line[2:].strip() for line in segment.text.split("Advice it gives:", 1)[-1]
              .splitlines() if line.startswith("- ")] if "Advice it gives:" in segment.text else []
    reading = f"ncu's rule '{segment.title}' uses it" + (f" ({about})" if about else "") + "."
    names = dict.fromkeys(extract.base_metric(m) for m in read.split(", ") if "__" in m)
    return [MetricNote(name=name, reading=reading, hardware_unit=extract.hardware_unit(name),
                       indicates=extract.bottlenecks_for(name, f"{segment.title} {about}"),
                       hints=tuple(advice[:2]), group=extract.group_for(name))
            for name in names if not name.endswith("_")]


def _doc_notes(segment: Segment) -> list[MetricNote]:
    if segment.profiler == "perf":
        return _perf_prose_notes(segment)
    mentions: dict[str, list[str]] = {}
    for match in extract.NCU_METRIC.finditer(segment.text):
        base = extract.base_metric(match.group(1))
        if not base.endswith("_"):
            mentions.setdefault(base, []).append(match.group(1))
    notes = []
    for base, forms in mentions.items():
        sentences = extract.sentences_about(segment.text, sorted(set(forms), key=len))
        said = " ".join(sentences)
        notes.append(MetricNote(
            name=base, meaning=said, unit=extract.guess_unit(base),
            hardware_unit=extract.hardware_unit(base),
            indicates=extract.bottlenecks_for(base, said),
            reading=" ".join(extract.threshold_sentences(sentences)),
            group=extract.group_for(base)))
    return notes


def _perf_prose_notes(segment: Segment) -> list[MetricNote]:
    notes = []
    for event in extract.perf_event_mentions(segment.text):
        sentences = extract.sentences_about(segment.text, [event])
        notes.append(MetricNote(name=event, meaning=" ".join(sentences),
                                hardware_unit=extract.hardware_unit(event, "perf"),
                                indicates=extract.bottlenecks_for(event, profiler="perf"),
                                reading=" ".join(extract.threshold_sentences(sentences))))
    return notes


def _event_notes(segment: Segment) -> list[MetricNote]:
    fields = _fields(segment.text)
    name = fields.get("Event", segment.title)
    kind = fields.get("Type", "")
    software = any(w in kind.lower() for w in ("software", "tool"))
    unit = fields.get("Unit", "")
    return [MetricNote(
        name=name, meaning=fields.get("Description", "") or f"{kind or 'perf event'}: {name}",
        unit=unit, hardware_unit=("the kernel (software counter)" if software
                                  else _pmu_unit(fields.get("PMU", ""))),
        indicates=extract.bottlenecks_for(name, profiler="perf"),
        group=extract.group_for(name, "perf", fields.get("Topic", "") or kind),
        aliases=tuple(a for a in fields.get("Aliases", "").split(", ") if a))]


def _pmu_unit(pmu: str) -> str:
    return f"CPU performance-monitoring unit ({pmu})" if pmu else extract.hardware_unit("", "perf")


_READERS = {"metric": _metric_notes, "section": _section_notes, "rule": _rule_notes,
            "doc": _doc_notes, "manpage": _perf_prose_notes, "event": _event_notes}


class LLMSummarizer:
    """Summaries by an LLM; a reply that stays malformed after one retry, or no reply, makes the
    summary come from `fallback` (the rules) with `fallback_reason` set."""

    uses_llm = True

    def __init__(self, client: JsonLLM, fallback: Summarizer | None = None,
                 template: Path | None = None, max_chars: int = 8000) -> None:
        self.client = client
        self.fallback = fallback or RuleSummarizer()
        self.template_path = template or data_path("templates", "summarize_segment.j2")
        self.max_chars = max_chars

    @cached_property
    def _template(self) -> jinja2.Template:
        source = self.template_path.read_text(encoding="utf-8")
        env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False,
                                 keep_trailing_newline=False)
        return env.from_string(source)

    @cached_property
    def key(self) -> str:
        template = digest(self.template_path.read_text(encoding="utf-8"))[:12]
        return f"llm-v1:{self.client.config.label}:{template}"

    def messages(self, segment: Segment) -> list[Message]:
        """The chat messages for one segment (system, user), rendered from the template."""
        values = {"segment": segment, "text": segment.text[:self.max_chars],
                  "bottlenecks": BOTTLENECKS}
        return [{"role": "system", "content": self._template.render(part="system", **values)},
                {"role": "user", "content": self._template.render(part="user", **values)}]

    def summarize(self, segment: Segment) -> SegmentSummary:
        messages = self.messages(segment)
        reason = ""
        for _ in range(2):  # a malformed reply gets one more chance
            try:
                reply = self.client.complete_json(messages, _REPLY_SCHEMA)
                notes = notes_from_reply(reply.data, segment)
            except LLMBadReply as exc:
                reason = f"bad reply: {exc}"
                continue
            except LLMUnavailable as exc:
                reason = f"unavailable: {exc}"
                break
            tokens = reply.usage.prompt_tokens + reply.usage.completion_tokens
            return SegmentSummary(segment.content_hash, "llm", notes, reply.model,
                                  tokens=tokens)
        return replace(self.fallback.summarize(segment), fallback_reason=reason)


def notes_from_reply(data: Mapping[str, Any], segment: Segment) -> tuple[MetricNote, ...]:
    """Validate the LLM's {"metrics": [...]}: LLMBadReply on wrong shapes; names that the segment
    does not contain are dropped (invented), unknown bottleneck keys too."""
    items = data.get("metrics")
    if not isinstance(items, list):
        raise LLMBadReply("'metrics' is not a list")
    notes: dict[str, MetricNote] = {}
    for item in items:
        note = _note_from_item(item)
        if note.name not in notes and _mentioned(note.name, segment):
            notes[note.name] = note
    return tuple(notes.values())


def _note_from_item(item: Any) -> MetricNote:
    if not isinstance(item, Mapping):
        raise LLMBadReply(f"a 'metrics' item is {type(item).__name__}, expected an object")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise LLMBadReply("a 'metrics' item has no 'name'")
    values: dict[str, Any] = {"name": extract.base_metric(name) if "__" in name
                              else name.strip()}
    for key in _STRING_FIELDS:
        value = item.get(key) or ""
        if not isinstance(value, str | int | float):
            raise LLMBadReply(f"'{key}' of {name} is {type(value).__name__}, expected a string")
        values[key] = " ".join(str(value).split())
    for key in _LIST_FIELDS:
        value = item.get(key) or []
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise LLMBadReply(f"'{key}' of {name} is not a list of strings")
        values[key] = tuple(v.strip() for v in value if v.strip())
    values["indicates"] = tuple(b for b in values["indicates"] if b in BOTTLENECKS)
    return MetricNote(**values)


def _mentioned(name: str, segment: Segment) -> bool:
    return name in segment.text or name in segment.title
