"""Starting, resuming and summarizing a tune run around the loop."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from pragma_ncu.coder.template import standalone
from pragma_ncu.coder.variant import Variant
from pragma_ncu.diagnose.engine import diagnose_in
from pragma_ncu.diagnose.model import Diagnosis
from pragma_ncu.profile.model import profile_from_json
from pragma_ncu.records import RoundRecord
from pragma_ncu.roofline import COMPUTE_KINDS
from pragma_ncu.tune.loop import Context, State, spec_of


def load_state(ctx: Context) -> State | None:
    """The state after the last finished round of `ctx.run_id`, or None when no round
    finished. What an interrupted round wrote is discarded, so it runs again whole."""
    finished = {n for n, status in ctx.store.rounds(ctx.run_id) if status == "done"}
    for n, status in ctx.store.rounds(ctx.run_id):
        if status != "done":
            ctx.store.discard_round(ctx.run_id, n)
    records = [RoundRecord.from_json(rec) for n, _, rec in ctx.store.decisions(ctx.run_id)
               if n in finished]
    if not records:
        return None
    best = records[-1].best_after
    assert best is not None
    variant = Variant.from_json(records[best.round].variant)
    return State(best, variant, _diagnosis(ctx, best.profile_path), records)


def _diagnosis(ctx: Context, path: str) -> Diagnosis | None:
    """Re-read the best's profile (the diagnosis is cheap to recompute, so it is not stored)."""
    if not path or not Path(path).is_file():
        return None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as fh:
        profile = profile_from_json(json.load(fh))
    if not profile.kernels:
        return None
    kernel = next((k for k in profile.kernels if k.name == ctx.spec.kernel_name),
                  profile.kernels[0])
    return diagnose_in(profile, kernel, ctx.knowledge, ctx.backend.ceiling_gbps)


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
        "llm": ctx.llm_label,
        "llm_tokens": sum(c.prompt_tokens + c.completion_tokens
                          for r in st.records for c in r.llm_calls),
    }


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
    best.write_text(standalone(spec, dict(st.best.params), variant.source))
    jinja = ".j2" if variant.filename.endswith(".j2") else ""
    template = out_dir / f"{stem}.best-template{ext}{jinja}"
    template.write_text(variant.source)
    written = {"best kernel": best, "best template": template}
    if variant.overlay:
        overlay = out_dir / f"{stem}.best-overlay.json"
        overlay.write_text(json.dumps(variant.overlay, indent=1) + "\n")
        written["best spec overlay"] = overlay
    return written

