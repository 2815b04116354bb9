"""Helpers shared by the GPU diagnosis (engine) and the CPU one (cpu): what a diagnosis needs
from the compendium, citing the metrics it mentions, the actions for a bottleneck and the order
of hot source lines. Kept apart so both can import them without importing each other."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from pragma_ncu.diagnose.findings import Citation
from pragma_ncu.knowledge.schema import GpuSpec, MetricEntry, Strategy
from pragma_ncu.profile.profiles import SourceLine

MAX_ACTIONS = 3


class Knowledge(Protocol):
    """What diagnose needs from the compendium (pragma_ncu.knowledge.compendium.Compendium)."""

    def lookup(self, metric: str) -> MetricEntry | None: ...

    def strategies_for(self, bottleneck: str) -> list[Strategy]: ...

    def gpu(self, name_or_arch: str) -> GpuSpec | None: ...


_METRIC = re.compile(r"[A-Za-z0-9_]+__[A-Za-z0-9_.]+")


def metric_names(text: str) -> list[str]:
    """The metric names in evidence that is a metric or a formula over metrics ("a / b")."""
    return [text] if " " not in text else _METRIC.findall(text)


def cite(metrics: Iterable[str], knowledge: Knowledge) -> tuple[tuple[Citation, ...],
                                                                  tuple[str, ...]]:
    """(citations of the metrics the compendium explains, names it has no entry for), each
    metric once, in the order given; a formula over metrics cites each of them."""
    citations, uncited = [], []
    for metric in dict.fromkeys(n for m in metrics for n in metric_names(m)):
        entry = knowledge.lookup(metric)
        if entry is None:
            uncited.append(metric)
            continue
        citations.append(Citation(metric, entry.name, entry.title, entry.meaning,
                                  entry.sources[0] if entry.sources else ""))
    return tuple(citations), tuple(uncited)


def actions_for(bottleneck: str, knowledge: Knowledge,
                limit: int = MAX_ACTIONS) -> tuple[str, ...]:
    """The first `limit` distinct actions of the strategies for a bottleneck, in file order."""
    actions = [a for s in knowledge.strategies_for(bottleneck) for a in s.actions]
    return tuple(dict.fromkeys(actions))[:limit]


def hot_lines(lines: tuple[SourceLine, ...], source_file: str | None) -> tuple[SourceLine, ...]:
    """The kernel's own file first (inlined header lines would otherwise crowd it out)."""
    if not source_file:
        return lines
    own = tuple(s for s in lines if s.file == source_file)
    return own + tuple(s for s in lines if s.file != source_file)
