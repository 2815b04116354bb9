"""Why a kernel's time changed: causes ranked by evidence, the metric deltas behind them, and a
short written diagnosis with what to check.

Ranking (deterministic, from the two profiles only):
1. `diagnose` runs on each side. A finding's score estimates the share of the kernel's time its
   cause accounts for, so score x duration is the time attributed to that cause. A cause's
   `rise` is the change of that time from BASE to NEW, as a share of the longer duration: the
   part of the slowdown the cause accounts for (negative when it shrank).
2. `metric_support` (0..1): how far the metrics the compendium relates to the cause moved. The
   cause's strategy metrics and its findings' evidence count fully, other entries whose
   `indicates` names the cause count half; the mean of the three largest movements.
3. `rule_support` (-1..1): ncu rules that speak to the cause (diagnose.engine.RULE_CLASSES)
   and appeared (+1 each) or vanished (-1 each).
score = rise + 0.15 metric_support + 0.10 rule_support; ties break by name. Metric deltas are
then ranked by relevance = movement x relation weight x the score of the cause they support.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from pragma_ncu.diagnose import causality
from pragma_ncu.diagnose.causality import MIN_OWN
from pragma_ncu.diagnose.findings import Diagnosis, Evidence, Finding
from pragma_ncu.knowledge.schema import BOTTLENECKS, GpuSpec, MetricEntry, Strategy
from pragma_ncu.triage.evidence import Movement
from pragma_ncu.triage.report import (
    IMPROVEMENT,
    REGRESSION,
    UNCHANGED,
    UNDECIDED,
    Cause,
    ConfigChange,
    DurationChange,
    KernelTriage,
    LineShift,
    MetricDelta,
    RuleChange,
)

W_METRICS = 0.15
W_RULES = 0.10
W_STRONG, W_INDICATES = 1.0, 0.5
TOP_SUPPORT = 3
MAX_CAUSES = 5
MAX_METRICS = 8
CLOSE_SECOND = 0.1  # a runner-up within this score of the top cause is mentioned
CLOCK_CHANGE = 0.03


class Knowledge(Protocol):
    """What triage needs from the compendium (pragma_ncu.knowledge.compendium.Compendium)."""

    def lookup(self, metric: str) -> MetricEntry | None: ...

    def strategies_for(self, bottleneck: str) -> list[Strategy]: ...

    def gpu(self, name_or_arch: str) -> GpuSpec | None: ...


@dataclass(frozen=True)
class Relation:
    """How strongly the compendium relates metrics to one bottleneck class."""

    bottleneck: str
    strong: frozenset[str]  # entry names: the cause's strategy metrics and finding evidence

    def weight(self, entry: MetricEntry) -> float:
        if entry.name in self.strong:
            return W_STRONG
        return W_INDICATES if self.bottleneck in entry.indicates else 0.0


def relation(bottleneck: str, findings: Iterable[Finding | None], knowledge: Knowledge
             ) -> Relation:
    names = [m for s in knowledge.strategies_for(bottleneck) for m in s.metrics]
    names += [e.metric for f in findings if f is not None for e in f.evidence]
    entries = (knowledge.lookup(n) for n in names)
    return Relation(bottleneck, frozenset(e.name for e in entries if e is not None))


def metric_support(moves: Sequence[Movement], rel: Relation) -> float:
    top = sorted((rel.weight(m.entry) * m.moved for m in moves), reverse=True)[:TOP_SUPPORT]
    return sum(top) / TOP_SUPPORT


def rule_support(bottleneck: str, rules: Sequence[RuleChange]) -> float:
    net = sum(1 if r.change == "appeared" else -1 for r in rules if bottleneck in r.causes)
    return float(max(-1, min(1, net)))


def rank_causes(db: Diagnosis, dn: Diagnosis, t_base: float, t_new: float,
                moves: Sequence[Movement], rules: Sequence[RuleChange], knowledge: Knowledge
                ) -> tuple[tuple[Cause, ...], dict[str, Relation]]:
    """Every cause with a finding on either side, best explanation of the change first (see
    the module docstring), and the relations used (for ranking the metric deltas)."""
    fb = {f.bottleneck: f for f in db.findings}
    fn = {f.bottleneck: f for f in dn.findings}
    longest = max(t_base, t_new) or 1.0
    causes, relations = [], {}
    for c in sorted(set(fb) | set(fn)):
        sb, sn = (fb[c].score if c in fb else 0.0), (fn[c].score if c in fn else 0.0)
        rise = (t_new * sn - t_base * sb) / longest
        relations[c] = rel = relation(c, (fb.get(c), fn.get(c)), knowledge)
        support, rules_net = metric_support(moves, rel), rule_support(c, rules)
        finding = fn.get(c) or fb[c]
        causes.append(Cause(c, finding.title,
                            round(rise + W_METRICS * support + W_RULES * rules_net, 4),
                            round(rise, 4), sb, sn, round(support, 4), rules_net,
                            finding.summary, finding.actions, finding.evidence,
                            "NEW" if c in fn else "BASE"))
    return tuple(_roots_first(causes)[:MAX_CAUSES]), relations


def _roots_first(causes: list[Cause]) -> list[Cause]:
    """Best explanation first; a cause that produces another listed one (causality.explains)
    takes that one's score when its own evidence moved at least a quarter as much, and ranks
    above it: a grown memory latency is explained by the occupancy that fell."""
    by_name = {c.bottleneck: c for c in causes}
    score = {c.bottleneck: c.score for c in causes}
    pairs = [(r, s) for r in by_name for s in by_name if causality.explains(r, s)
             and by_name[r].score > 0 and by_name[r].score >= MIN_OWN * by_name[s].score]
    for root, symptom in pairs:
        score[root] = max(score[root], score[symptom])
    symptoms = {s for _, s in pairs}
    ranked = [replace(c, score=round(score[c.bottleneck], 4)) for c in causes]
    ranked.sort(key=lambda x: (-x.score, x.bottleneck in symptoms, x.bottleneck))
    return ranked


def metric_deltas(moves: Sequence[Movement], causes: Sequence[Cause],
                  relations: dict[str, Relation]) -> tuple[MetricDelta, ...]:
    """The moved metrics most relevant to the causes that explain the change."""
    out = []
    for m in moves:
        best, supports = 0.0, ""
        for c in causes:
            value = max(c.score, 0.0) * relations[c.bottleneck].weight(m.entry)
            if value > best:
                best, supports = value, c.bottleneck
        if best <= 0:
            continue
        change = 100.0 * (m.new - m.base) / abs(m.base) if m.base else None
        out.append(MetricDelta(m.metric, m.entry.title, m.unit, m.base, m.new, change,
                               round(best * m.moved, 4), supports))
    out.sort(key=lambda d: (-d.relevance, d.metric))
    return tuple(out[:MAX_METRICS])


def number(value: float, unit: str = "") -> str:
    """A value for a sentence or a table cell: 3 significant digits, thousands separators up
    to a million, then M/G."""
    prefix = ""
    if abs(value) >= 1e9:
        text, prefix = f"{value / 1e9:.3g}", "G"
    elif abs(value) >= 1e6:
        text, prefix = f"{value / 1e6:.3g}", "M"
    else:
        text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    if unit in ("", "%"):
        return text + prefix + unit
    if unit in ("B", "B/s", "byte", "byte/s", "Hz"):
        return f"{text} {prefix}{unit}"  # 14 GB
    return f"{text}{prefix} {unit}"  # 3M threads


def write_diagnosis(name: str, change: DurationChange, class_base: str, class_new: str,
                    causes: Sequence[Cause], config: Sequence[ConfigChange],
                    rules: Sequence[RuleChange], threshold_pct: float) -> str:
    """A few sentences: the verdict, the bottleneck on each side, the likely cause with the
    facts and ncu rules that changed."""
    parts = [_verdict_sentence(name, change, threshold_pct)]
    parts.append(f"Bottleneck: {class_base} on both sides." if class_base == class_new else
                 f"Bottleneck: {class_base} on BASE, {class_new} on NEW.")
    parts += _cause_sentences(change.verdict, causes)
    if config:
        parts.append("Changed: " + "; ".join(
            f"{c.label} {number(c.base, c.unit)} -> {number(c.new, c.unit)}"
            for c in config[:5]) + ".")
    clock = next((c for c in config if c.label == "SM clock"), None)
    if clock and abs(clock.new - clock.base) > CLOCK_CHANGE * clock.base:
        parts.append("The SM clock differs: part of the time difference is the clock, not the "
                     "code (a different GPU, power or thermal state).")
    appeared = _appeared(rules, causes[0].bottleneck if causes else "")
    if appeared and change.verdict != UNCHANGED:
        parts.append("ncu now reports: " + ", ".join(
            r.rule + (f" (est. {r.speedup:.0f}%)" if r.speedup is not None else "")
            for r in appeared[:3]) + ".")
    return " ".join(parts)


def _appeared(rules: Sequence[RuleChange], top: str) -> list[RuleChange]:
    """The rules that appeared, each named once: a rule reports once per unit it looks at
    (WorkloadImbalance for the SMs, the SMSPs and the L1 slices), so its result with the
    largest estimate speaks for it; those of the top cause first, then by estimate."""
    best: dict[str, RuleChange] = {}
    for r in rules:
        held = best.get(r.rule)
        if r.change == "appeared" and (held is None or (r.speedup or 0.0) > (held.speedup or 0.0)):
            best[r.rule] = r
    return sorted(best.values(), key=lambda r: (top not in r.causes, -(r.speedup or 0.0),
                                                r.rule))


def _verdict_sentence(name: str, d: DurationChange, threshold_pct: float) -> str:
    basis = d.note if d.basis != "ncu" else (
        "ncu's duration, one launch per side" if d.launches_base == d.launches_new == 1 else
        f"ncu's median durations of {d.launches_base} + {d.launches_new} launches")
    times = f"{number(d.base_us)} -> {number(d.new_us)} µs"
    if d.verdict == REGRESSION:
        return f"{name} is {d.delta_pct:.1f}% slower ({times}; {basis})."
    if d.verdict == IMPROVEMENT:
        return f"{name} is {-d.delta_pct:.1f}% faster ({times}; {basis})."
    if d.verdict == UNDECIDED:
        return f"{name}: too noisy to decide whether it changed ({d.delta_pct:+.1f}%, {times}; " \
            f"{basis})."
    limit = "the noise" if d.beyond_noise is False else f"the {threshold_pct:g}% threshold"
    return f"{name}: no change beyond {limit} ({d.delta_pct:+.1f}%, {times}; {basis})."


def _cause_sentences(verdict: str, causes: Sequence[Cause]) -> list[str]:
    if verdict == IMPROVEMENT:
        relief = min(causes, key=lambda c: (c.rise, c.bottleneck), default=None)
        if relief is None or relief.rise >= 0:
            return []
        return [f"Largest relief: {BOTTLENECKS[relief.bottleneck]} (share of time "
                f"{relief.share_base:.2f} -> {relief.share_new:.2f})."]
    if verdict != REGRESSION:
        return []
    if not causes or causes[0].score <= 0:
        return ["No detector explains the slowdown: compare the metric and launch changes "
                "(clocks, problem size, other work on the GPU)."]
    top = causes[0]
    out = [f"Most likely cause: {BOTTLENECKS[top.bottleneck]} ({top.bottleneck}; its share of "
           f"the time {top.share_base:.2f} -> {top.share_new:.2f}). {top.summary}"]
    if len(causes) > 1 and causes[1].score > 0 and top.score - causes[1].score < CLOSE_SECOND:
        out.append(f"Also possible: {causes[1].bottleneck} (score {causes[1].score:.2f} vs "
                   f"{top.score:.2f}).")
    return out


def what_to_check(verdict: str, causes: Sequence[Cause], lines: Sequence[LineShift],
                  knowledge: Knowledge) -> tuple[str, ...]:
    """For a regression: the evidence that confirms the top cause (its strategy's pattern),
    the compendium's first fixes, and the source line that gained the most stall samples."""
    if verdict != REGRESSION or not causes or causes[0].score <= 0:
        return ()
    top = causes[0]
    strategies = knowledge.strategies_for(top.bottleneck)
    out = [f"Confirm: {strategies[0].evidence}"] if strategies else []
    out += [f"Fix: {a}" for a in top.actions[:2]]
    gained = max(lines, key=lambda s: (s.shift, s.location), default=None)
    if gained is not None and gained.shift > 0:
        out.append(f"Look at {gained.location} (`{gained.text[:60]}`): "
                   f"{gained.base_share:.0%} -> {gained.new_share:.0%} of the sampled stalls"
                   + (f", mostly {gained.stall}." if gained.stall else "."))
    return tuple(out)


def evidence_words(kernel: KernelTriage, top: Cause | None, knowledge: Knowledge,
                   width: int = 60) -> str:
    """The evidence of cause `top` in a few words, for a one-line row: the launch or build
    fact that speaks for it and moved, else the first value its finding rests on, else its
    most relevant metric change, else its title."""
    if top is None:
        change = kernel.config[0] if kernel.config else None
        return (f"{change.label} {number(change.base, change.unit)} -> "
                f"{number(change.new, change.unit)}")[:width] if change else ""
    facts = [c for c in kernel.config if c.label in _CAUSE_FACTS.get(top.bottleneck, ())]
    if facts:
        c = facts[0]
        return f"{c.label} {number(c.base, c.unit)} -> {number(c.new, c.unit)}"[:width]
    shown = next((e for e in top.evidence if isinstance(e.value, float | int)), None)
    if shown is not None:
        return _evidence_text(shown, top.on, knowledge, width)
    metric = next((m for m in kernel.metrics if m.supports == top.bottleneck), None)
    if metric is not None:
        values = f": {number(metric.base, metric.unit)} -> {number(metric.new, metric.unit)}"
        room = max(8, width - len(values))
        title = metric.title if len(metric.title) <= room else metric.title[: room - 3] + "..."
        return title + values
    return top.title[:width]


def _evidence_text(e: Evidence, side: str, knowledge: Knowledge, width: int) -> str:
    """'L1 data-pipe wavefronts (LSU) 26.4 on NEW (ideal <= 4)', the title cut to fit."""
    entry = knowledge.lookup(e.metric.split(" ")[0])
    title = entry.title if entry is not None else (e.note or e.metric)
    note = f" ({e.note})" if e.note and entry is not None else ""
    values = f" {number(float(e.value), e.unit)} on {side}{note}"
    room = max(8, width - len(values))
    return (title if len(title) <= room else title[: room - 3] + "...") + values


# The launch/build facts (evidence.FACTS labels) that speak for a cause in a row's few words.
_CAUSE_FACTS: dict[str, tuple[str, ...]] = {
    "uncoalesced_access": ("global load sectors/request", "global store sectors/request"),
    "register_spills": ("local-memory (spill) bytes", "registers/thread"),
    "local_memory": ("local-memory (spill) bytes",),
    "occupancy_registers": ("registers/thread", "theoretical occupancy"),
    "occupancy_shared": ("static shared mem/block", "dynamic shared mem/block",
                         "theoretical occupancy"),
    "occupancy_block": ("block size", "theoretical occupancy"),
    "small_grid": ("grid size",),
    "tail_effect": ("grid size", "block size"),
    "warp_divergence": ("active threads/warp instruction",),
}
