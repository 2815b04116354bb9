"""Resuming a tune run: the state after its last finished round, read back from the run
store (an interrupted round is discarded, so it runs again whole)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from pragma_ncu.backends import diagnose_in
from pragma_ncu.coder.variant import Variant
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.loop.context import Context, State
from pragma_ncu.measure.records import RoundRecord
from pragma_ncu.profile.profiles import profile_from_json


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
    return State(best, variant, _diagnosis(ctx, best.profile_path), records,
                 spent_before_s=sum(r.wall_s for r in records))


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
    return diagnose_in(profile, kernel, ctx.knowledge, ctx.backend.ceiling_gbps,
                       ctx.backend.compute_ceilings)
