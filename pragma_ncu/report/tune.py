"""Terminal tables of a tune run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from pragma_ncu.measure.records import RoundRecord, verdict_word


def rounds_table(records: Sequence[RoundRecord]) -> str:
    """One row per round: what it tried, what it found, what the conductor decided."""
    base = records[0].best_after.objective_us if records and records[0].best_after else None
    rows = []
    for r in records:
        c, b = r.candidate, r.best_after
        cand = (f"{c.objective_us:.2f}" if c is not None and c.objective_us else
                ("failed" if r.round else "-"))
        best = b.objective_us if b is not None else None
        rows.append([r.round, r.action, str(r.variant.get("name", ""))[:24], cand,
                     f"{best:.2f}" if best else "-",
                     f"{base / best:.2f}×" if base and best else "-",
                     f"{100 * b.ceiling_fraction:.0f}%" if b and b.ceiling_fraction else "-",
                     verdict_word(r.decision), r.decision.action])
    return tabulate(rows, headers=["round", "did", "variant", "cand µs", "best µs",
                                   "speedup", "% roofline", "accepted", "next"])


def summary_lines(run_id: str, summary: dict[str, Any]) -> list[str]:
    speed = f"{summary['speedup']:.2f}×" if summary.get("speedup") else "n/a"
    lines = [f"run {run_id} on {summary.get('device') or 'unknown GPU'}: "
             f"{_us(summary.get('baseline_us'))} → {_us(summary.get('best_us'))} ({speed}), "
             f"best from round {summary.get('best_round')} ({summary.get('best_variant')}) at "
             f"{summary.get('best_params')}",
             f"stopped: {summary.get('stop_reason')}"]
    if summary.get("fixes"):
        lines.append("the fixes the diagnosis named:")
        lines += [f"  - {fix}" for fix in summary["fixes"]]
    if summary.get("too_noisy"):
        lines.append(f"undecided: {summary['too_noisy']}")
    if summary.get("moves_tried"):
        lines.append(f"source moves: won {', '.join(summary.get('moves_won') or []) or 'none'}"
                     f" (tried {', '.join(summary['moves_tried'])}; see the trace)")
    if summary.get("llm") and summary["llm"] != "none":
        lines.append(f"LLM: {summary['llm']}, {summary.get('llm_tokens', 0)} tokens")
    lines += [f"warning: {w}" for w in summary.get("warnings") or ()]
    return lines


def _us(value: float | None) -> str:
    return f"{value:.2f} µs" if value else "n/a"
