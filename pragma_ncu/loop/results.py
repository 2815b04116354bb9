"""What a finished tune run leaves: its headline numbers (kept on the run's row) and the
historical best as a standalone kernel and as its template."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pragma_ncu.coder.moves.assemble import is_moves, plain_source
from pragma_ncu.infra import sources
from pragma_ncu.loop.context import Context, State, spec_of
from pragma_ncu.loop.moves import move_names
from pragma_ncu.measure.records import RoundRecord, too_noisy
from pragma_ncu.measure.roofline import COMPUTE_KINDS
from pragma_ncu.spec.template import standalone


def summary(ctx: Context, st: State, stop_reason: str = "") -> dict[str, Any]:
    """The run's headline numbers, kept on the run's row."""
    base = st.records[0].best_after
    base_us = base.objective_us if base else None
    best_us = st.best.objective_us
    return {
        "baseline_us": base_us, "best_us": best_us,
        "speedup": base_us / best_us if base_us and best_us else None,
        "best_round": st.best.round, "best_variant": st.best.variant,
        "best_params": st.best.params, "rounds": len(st.records) - 1,
        "ceiling_gbps": ctx.backend.ceiling_gbps, "device": ctx.backend.device,
        **_compute_summary(ctx),
        "ceiling_fraction": st.best.ceiling_fraction,
        "stop_reason": stop_reason or st.records[-1].decision.reason,
        "fixes": list(st.records[-1].decision.fixes),
        "max_time_s": ctx.options.max_time_s,
        **too_noisy(st.records),
        "llm": ctx.llm_label,
        "llm_tokens": sum(c.prompt_tokens + c.completion_tokens
                          for r in st.records for c in r.llm_calls),
        "moves_tried": sorted({t.move for r in st.records for t in r.moves}),
        "moves_won": moves_won(st.records, st.best.round),
    }


def moves_won(records: Sequence[RoundRecord], best_round: int) -> list[str]:
    """The moves in the best kernel (from round `best_round`): those whose winning values
    left their defaults in an accepted moves round that no later accepted rewrite replaced."""
    won: list[str] = []
    for r in records:
        if not r.decision.accepted or r.round > best_round:
            continue
        if r.variant.get("origin") == "llm":
            won = []
        won += [t.move for t in r.moves if t.taken]
    return list(dict.fromkeys(won))


def _compute_summary(ctx: Context) -> dict[str, Any]:
    """The compute ceiling the roofline stands on, when the spec counts FLOPs."""
    compute = ctx.backend.compute
    if compute is None:
        return {}
    key, name = COMPUTE_KINDS[compute.kind]
    return {"compute_rate": compute.per_second.get(key), "compute_name": name}


def write_best(ctx: Context, st: State, out_dir: Path) -> dict[str, Path]:
    """The historical best as a standalone source (parameters as #defines) and as its
    template."""
    out_dir.mkdir(parents=True, exist_ok=True)
    variant = st.best_variant
    spec = spec_of(ctx, variant)
    plain = ctx.spec.source_path.name.removesuffix(".j2")
    stem, ext = plain.split(".")[0], Path(plain).suffix or ".cu"
    best = out_dir / f"{stem}.best{ext}"
    sources.write(best, plain_source(variant, spec, dict(st.best.params), move_names())
                  if is_moves(variant) else
                  standalone(spec, dict(st.best.params), variant.source))
    jinja = ".j2" if variant.filename.endswith(".j2") else ""
    template = out_dir / f"{stem}.best-template{ext}{jinja}"
    sources.write(template, variant.source)
    written = {"best kernel": best, "best template": template}
    if variant.overlay:
        overlay = out_dir / f"{stem}.best-overlay.json"
        overlay.write_text(json.dumps(variant.overlay, indent=1) + "\n")
        written["best spec overlay"] = overlay
    return written

