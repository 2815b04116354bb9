"""The analysis bullets of a decision: each states metric values and cites compendium entries."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pragma_ncu.conductor.accept import UNDECIDED
from pragma_ncu.conductor.situation import Policy, Situation
from pragma_ncu.conductor.state import CPU_KEY_METRICS
from pragma_ncu.diagnose.cite import Knowledge
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.measure.records import Bullet, Citation, KernelState
from pragma_ncu.measure.roofline import MEMORY

DRAM_PCT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
# metric -> (label, unit) of the side-by-side deltas worth a sentence
DELTAS = {
    DRAM_PCT: ("DRAM throughput", "%"),
    "sm__warps_active.avg.pct_of_peak_sustained_active": ("achieved occupancy", "%"),
    "launch__registers_per_thread": ("registers/thread", ""),
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio":
        ("long-scoreboard stall", " cycles/issue"),
    "smsp__inst_executed.sum": ("warp instructions", ""),
    # CPU kernels (per call)
    "IPC": ("instructions per cycle", ""),
    "tma_backend_bound": ("back-end bound", "% of slots"),
    "tma_bad_speculation": ("bad speculation", "% of slots"),
    "Ir": ("instructions", ""),
    "Dw": ("data writes", ""),
    "D1_miss_rate": ("L1 data miss rate", ""),
    "LL_MPKI": ("last-level data misses per 1000 instructions", ""),
    "branch_mispredict_rate": ("branch mispredict rate", ""),
}
MAX_FINDINGS = 2
MAX_GUIDANCE = 4


def analysis(situation: Situation, policy: Policy) -> Iterator[Bullet]:
    if situation.round > 0:
        yield _comparison(situation)
    yield from _deltas(situation.best_before, situation.candidate)
    yield _roofline(situation.best, policy,
                    "the baseline" if situation.round == 0 else "the historical best")
    yield from _findings(situation.diagnosis)


def _comparison(s: Situation) -> Bullet:
    cand, before = s.candidate, s.best_before
    if cand is None or not cand.verified:
        text = (cand.failure if cand is not None else "") or s.failure_text or "not verified"
        return Bullet(f"no verified candidate this round ({s.failure or 'failed'}): {text}")
    values = {"candidate objective": _us(cand.objective_us)}
    if before is not None:
        values["historical best objective"] = _us(before.objective_us)
    speed = f", {s.speedup:.2f}× the historical best" if s.speedup else ""
    verdict = ("accepted as the new best" if s.accepted else
               "undecided, the best stays" if s.outcome == UNDECIDED else "not accepted")
    return Bullet(f"candidate {_us(cand.objective_us)} (geomean over "
                  f"{len(cand.times_us)} shapes){speed}: {verdict} — {s.acceptance}", values)


def _deltas(before: KernelState | None, cand: KernelState | None) -> Iterator[Bullet]:
    if before is None or cand is None or not cand.metrics or not before.metrics:
        return
    parts, values = [], {}
    for metric, (label, unit) in DELTAS.items():
        a, b = before.metrics.get(metric), cand.metrics.get(metric)
        if a is None or b is None or a == b:
            continue
        parts.append(f"{label} {_num(a)}{unit} → {_num(b)}{unit}")
        values[metric] = f"{_num(a)} → {_num(b)}"
    if parts:
        yield Bullet("side by side with the historical best: " + ", ".join(parts), values)


def _roofline(best: KernelState, policy: Policy, who: str) -> Bullet:
    values: dict[str, str] = {}
    dram = best.metrics.get(DRAM_PCT)
    if dram is not None:
        values[DRAM_PCT] = f"{dram:.1f}%"
    if best.ceiling_fraction is None:
        return Bullet(f"{who}'s distance to the roofline is unknown (no copy "
                      "ceiling was measured)", values)
    values["roofline fraction"] = f"{100 * best.ceiling_fraction:.1f}%"
    dram_txt = f"; ncu's DRAM throughput {dram:.1f}% of peak" if dram is not None else ""
    bound = best.bound_by or MEMORY
    ceiling = "the measured copy ceiling" if bound == MEMORY else f"the measured {bound} ceiling"
    return Bullet(f"{who} runs at {100 * best.ceiling_fraction:.1f}% of the attainable "
                  f"roofline, set by {ceiling} (stop target "
                  f"{100 * policy.target_fraction:.0f}%){dram_txt}", values)


def _findings(d: Diagnosis | None) -> Iterator[Bullet]:
    if d is None:
        yield Bullet("no profile of the best: the decision rests on timings alone")
        return
    if not d.findings:
        yield Bullet("the profile shows no bottleneck above the detectors' thresholds")
    cited = {c.metric: c.entry for c in d.citations}
    for f in d.findings[:MAX_FINDINGS]:
        values = {e.metric: f"{_num(e.value)} {e.unit}".strip() for e in f.evidence}
        cites = tuple(dict.fromkeys(cited[e.metric] for e in f.evidence if e.metric in cited))
        rules = f" (ncu: {', '.join(f.ncu_rules)})" if f.ncu_rules else ""
        yield Bullet(f"{f.title} [{f.bottleneck}, ~{100 * f.score:.0f}% of the time]: "
                     f"{f.summary}{rules}", values, cites)


def citations(found: Diagnosis | None, bullets: Sequence[Bullet],
              knowledge: Knowledge | None = None) -> tuple[Citation, ...]:
    """The compendium entries of the profiler metrics the bullets state (looked up in
    `knowledge`), and those the diagnosis cited for them."""
    out: dict[str, Citation] = {}
    if found is not None:
        named = {m for b in bullets for m in b.values} | {c for b in bullets for c in b.cites}
        for c in found.citations:
            if c.metric in named or c.entry in named:
                out.setdefault(c.metric, Citation(c.metric, c.entry, c.title, c.meaning,
                                                  c.source))
    if knowledge is not None:
        for metric in (m for b in bullets for m in b.values if is_metric(m)):
            entry = None if metric in out else knowledge.lookup(metric)
            if entry is not None:
                out[metric] = Citation(metric, entry.name, entry.title, entry.meaning,
                                       entry.sources[0] if entry.sources else "")
    return tuple(out.values())


def with_cites(bullets: Iterable[Bullet], cited: Sequence[Citation]) -> tuple[Bullet, ...]:
    """Each bullet citing the entries of the metrics it states."""
    entry = {c.metric: c.entry for c in cited}
    return tuple(Bullet(b.text, b.values, tuple(dict.fromkeys(
        (*b.cites, *(entry[m] for m in b.values if m in entry))))) for b in bullets)


def is_metric(name: str) -> bool:
    """A profiler metric name (ncu's `unit__counter...`, or a perf or cachegrind one the
    conductor states), not a derived label."""
    return " " not in name and ("__" in name or name in CPU_KEY_METRICS)


def guidance(diagnosis: Diagnosis | None) -> tuple[str, ...]:
    """Structural changes for the coder: the compendium's actions for the top findings."""
    if diagnosis is None:
        return ()
    out: list[str] = []
    for f in diagnosis.findings[:MAX_FINDINGS]:
        out += [f"{a} (for {f.bottleneck})" for a in f.actions]
    return tuple(dict.fromkeys(out))[:MAX_GUIDANCE]


def _us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} µs"


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    return str(value)
