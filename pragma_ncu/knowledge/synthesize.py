"""Stage 3 of `knowledge build`: all summaries → one list of MetricEntry (origin "generated").

Everything said about the same metric (same profiler, same base name) is merged into one entry;
metrics sharing a hardware-unit prefix or a known name pattern also get a family entry. Every
entry is checked with the schema's own validator before it is written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pragma_ncu.infra.errors import SpecError
from pragma_ncu.knowledge import extract
from pragma_ncu.knowledge.schema import BOTTLENECKS, MetricEntry, entry_from_dict
from pragma_ncu.knowledge.segments import MetricNote, Segment, SegmentSummary

# Name patterns that form families beyond the hardware-unit prefix: (prefix, title, group).
FAMILY_PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("smsp__pcsamp_warps_issue_stalled_", "Warp stall reasons (PC sampling)", "warp_stalls"),
    ("smsp__average_warp_latency_issue_stalled_", "Cycles per stall reason", "warp_stalls"),
    ("smsp__warps_issue_stalled_", "Warps stalled, by reason", "warp_stalls"),
    ("launch__occupancy_limit_", "Occupancy limiters", "occupancy"),
    ("sm__inst_executed_pipe_", "Instructions executed per pipe", "compute"),
    ("sm__pipe_", "Pipe utilization", "compute"),
    ("sm__sass_thread_inst_executed_op_", "Thread instructions by opcode", "instructions"),
    ("l1tex__data_bank_conflicts_", "Shared-memory bank conflicts", "memory"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_", "Global-memory sectors per operation", "memory"),
    ("tma_", "Top-down analysis metrics", "topdown"),
)
_MAX_TEXT = 700
_BIG_SEGMENT = 40  # a segment naming more metrics than this is a list: no "related" from it


@dataclass(frozen=True)
class Synthesis:
    """The generated compendium: entries, and how many are metrics and families."""

    entries: tuple[MetricEntry, ...]
    metrics: int
    families: int
    rejected: tuple[str, ...] = ()  # entries the schema refused, with why (should stay empty)


@dataclass(frozen=True)
class _Said:
    note: MetricNote
    segment: Segment
    method: str


def synthesize(pairs: Iterable[tuple[Segment, SegmentSummary]]) -> Synthesis:
    """Merge the notes of all summaries into validated, sorted entries."""
    said: dict[tuple[str, str], list[_Said]] = {}
    neighbours: dict[tuple[str, str], Counter[str]] = {}
    for segment, summary in pairs:
        names = [n.name for n in summary.notes]
        for note in summary.notes:
            key = (segment.profiler, note.name)
            said.setdefault(key, []).append(_Said(note, segment, summary.method))
            if len(names) <= _BIG_SEGMENT:
                neighbours.setdefault(key, Counter()).update(n for n in names if n != note.name)
    metrics = [merge_metric(profiler, name, items, neighbours.get((profiler, name), Counter()))
               for (profiler, name), items in sorted(said.items())]
    families = family_entries(metrics)
    entries, rejected = _validated(families + metrics)
    n_families = sum(1 for e in entries if e.family)
    return Synthesis(tuple(entries), len(entries) - n_families, n_families, tuple(rejected))


def _validated(entries: Sequence[MetricEntry]) -> tuple[list[MetricEntry], list[str]]:
    good, bad = [], []
    for entry in entries:
        try:
            good.append(entry_from_dict(entry.to_json(), "generated compendium"))
        except SpecError as exc:
            bad.append(str(exc))
    return good, bad


def _rank(item: _Said) -> int:
    """Which notes speak first: the profiler's own one-line description, then sections, rules,
    then prose; LLM readings before rule excerpts of the same kind."""
    order = {"metric": 0, "event": 0, "section": 1, "rule": 2, "doc": 3, "manpage": 4}
    return order.get(item.segment.kind, 5) * 2 + (0 if item.method == "llm" else 1)


def merge_metric(profiler: str, name: str, items: Sequence[_Said],
                 neighbours: Counter[str]) -> MetricEntry:
    """One entry from everything said about one metric."""
    items = sorted(items, key=_rank)
    notes = [i.note for i in items]
    titled = sorted(items, key=lambda i: (i.segment.kind != "section", _rank(i)))
    title = _first(i.note.title for i in titled) or extract.title_for(name)
    unit = _first(n.unit for n in notes) or extract.guess_unit(name)
    meaning = _join((n.meaning for n in notes), 3) or (
        f"{title}: the crawled {profiler} sources name this "
        f"{'event' if profiler == 'perf' else 'metric'} without describing it.")
    return MetricEntry(
        name=name, profiler=profiler, title=title,
        group=_most_common(n.group for n in notes) or extract.group_for(name, profiler),
        unit=unit, meaning=meaning,
        hardware_unit=_first(n.hardware_unit for n in notes)
        or extract.hardware_unit(name, profiler),
        indicates=_union((b for n in notes for b in n.indicates), keep=BOTTLENECKS.__contains__),
        reading=_join((n.reading for n in notes), 3) or extract.reading_for(name, unit, profiler),
        sources=_union((i.segment.origin for i in items), limit=20),
        related=tuple(n for n, _ in neighbours.most_common(8)),
        hints=_union((h for n in notes for h in n.hints), limit=6),
        aliases=_union((a for n in notes for a in n.aliases if a != name), limit=8),
        family=False, origin="generated")


def family_entries(metrics: Sequence[MetricEntry]) -> list[MetricEntry]:
    """Family entries: ncu hardware-unit prefixes, known name patterns, perf dotted prefixes."""
    groups: dict[tuple[str, str], list[MetricEntry]] = {}
    for entry in metrics:
        for prefix in _family_prefixes(entry):
            groups.setdefault((entry.profiler, prefix), []).append(entry)
    patterns = {p: (t, g) for p, t, g in FAMILY_PATTERNS}
    return [_family(profiler, prefix, members, patterns.get(prefix))
            for (profiler, prefix), members in sorted(groups.items()) if len(members) >= 2]


def _family_prefixes(entry: MetricEntry) -> list[str]:
    prefixes = [p for p, _, _ in FAMILY_PATTERNS if entry.name.startswith(p)]
    if entry.profiler == "ncu" and extract.unit_prefix(entry.name):
        prefixes.append(extract.unit_prefix(entry.name) + "__")
    if entry.profiler == "perf" and "." in entry.name:
        prefixes.append(entry.name.split(".", 1)[0] + ".")
    return prefixes


def _family(profiler: str, prefix: str, members: Sequence[MetricEntry],
            pattern: tuple[str, str] | None) -> MetricEntry:
    ranked = sorted(members, key=lambda e: (-len(e.sources), e.name))
    counted = Counter(b for e in members for b in e.indicates)
    floor = max(2, len(members) // 10)
    indicates = tuple(b for b, n in counted.most_common(4) if n >= floor)
    hardware = (extract.hardware_unit(members[0].name, profiler) if prefix.endswith("__")
                else _most_common(e.hardware_unit for e in members))
    title = pattern[0] if pattern else f"{prefix}* {'metrics' if profiler == 'ncu' else 'events'}"
    examples = ", ".join(e.name for e in ranked[:4])
    return MetricEntry(
        name=prefix, profiler=profiler, title=title,
        group=pattern[1] if pattern else _most_common(e.group for e in members) or "other",
        unit="", hardware_unit=hardware or "unknown", indicates=indicates,
        meaning=(f"The {len(members)} {profiler} names starting with '{prefix}' found in this "
                 f"build ({hardware}); for example {examples}."),
        reading=("A family, not a single value: read the member that matches the question (its "
                 "own entry says how); members ending in .pct_of_peak_sustained_* compare the "
                 "unit with its peak rate."),
        sources=_union((s for e in ranked for s in e.sources), limit=10),
        related=tuple(e.name for e in ranked[:12]), family=True, origin="generated")


def _first(values: Iterable[str]) -> str:
    return next((v.strip() for v in values if v and v.strip()), "")


def _most_common(values: Iterable[str]) -> str:
    counted = Counter(v for v in values if v)
    return counted.most_common(1)[0][0] if counted else ""


def _union(values: Iterable[str], limit: int = 0,
           keep: Callable[[str], bool] | None = None) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for value in values:
        value = value.strip()
        if value and (keep is None or keep(value)):
            seen.setdefault(value, None)
    out = tuple(seen)
    return out[:limit] if limit else out


def _sentence(text: str) -> str:
    """One whitespace-normalized sentence: capital first letter, closing punctuation."""
    text = " ".join(text.split())
    if not text:
        return ""
    if text.split(" ", 1)[0].isalpha():  # not a metric name, which keeps its case
        text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?:;)" else f"{text}."


def _join(texts: Iterable[str], limit: int) -> str:
    """Distinct texts (case-insensitive, none contained in another), at most `limit`, cut to
    _MAX_TEXT characters."""
    chosen: list[str] = []
    for text in texts:
        text = _sentence(text)
        lowered = text.lower()
        if not text or any(lowered in c.lower() for c in chosen):
            continue
        chosen = [c for c in chosen if c.lower() not in lowered] + [text]
        if len(chosen) >= limit:
            break
    joined = " ".join(chosen)
    return joined if len(joined) <= _MAX_TEXT else joined[:_MAX_TEXT - 3].rstrip() + "..."
