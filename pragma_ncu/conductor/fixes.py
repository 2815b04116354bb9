"""What became of each fix the diagnosis named, for a run that stops below its target: for
each top finding, the moves that answer its class and what each did (won, with its measured
effect; searched without gain; refused or dropped, with why; does not fit this source, with
why; not reached), or that no move answers it and a rewrite is needed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.measure.records import MoveTrial

REWRITE = "no move answers it: it needs a rewrite (an LLM, or a hand edit)"


def named_fixes(diagnosis: Diagnosis | None, options: Sequence[Any],
                trials: Sequence[MoveTrial], also: Mapping[str, str], top: int,
                least: float) -> tuple[str, ...]:
    """One line per finding among the `top` first scoring at least `least` (the first always):
    its title and class, then each move that answers the class (or the class it reads as
    below the roofline, `also`) with what became of it. `options` are the conductor's
    MoveOptions (name, answers, applies, reason)."""
    if diagnosis is None or not diagnosis.findings:
        return ()
    below = not diagnosis.roofline.at_roofline
    findings = [f for k, f in enumerate(diagnosis.findings[:top]) if k == 0 or f.score >= least]
    lines = []
    for f in findings:
        classes = {f.bottleneck, *((also[f.bottleneck],) if below and f.bottleneck in also
                                   else ())}
        answering = [m for m in options if classes & set(m.answers)]
        parts = [_fate(m, [t for t in trials if t.move == m.name]) for m in answering]
        lines.append(f"{f.title} ({f.bottleneck}): " + ("; ".join(parts) if parts else REWRITE))
    return tuple(lines)


def _fate(option: Any, trials: Sequence[MoveTrial]) -> str:
    """What became of one move, from its trials (the last says most) or its fit."""
    won = [t for t in trials if t.status == "searched" and t.taken]
    if won:
        t = won[-1]
        effect = f", {t.effect:.2f}x over the same search without it" if t.effect else ""
        return f"{option.name} won ({_values(t.won)}{effect})"
    if trials:
        t = trials[-1]
        if t.status == "searched":
            return f"{option.name} searched, no point beat its default beyond noise"
        return f"{option.name} {t.status} ({t.reason})"
    if not option.applies:
        return f"{option.name} does not fit ({option.reason})"
    return f"{option.name} fits but was not reached (the rounds ran out)"


def _values(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())
