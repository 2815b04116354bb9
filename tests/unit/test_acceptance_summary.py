"""tools/acceptance_summary.py (the table of tools/gpu_acceptance_check.sh) on a replayed
recorded search's results.json and a simulated tune run's JSON, as the commands write them."""

from __future__ import annotations

import json
from pathlib import Path

from pragma_ncu import loop
from tests.recorded_search import replay
from tests.tools_loader import load_tool
from tests.tune_rig import templated_rig


def test_every_verdict_is_a_row_with_its_figures(tmp_path: Path) -> None:
    result, _ = replay("silu_and_mul", "exhaustive", 500, jitter=1.0, seed=5)
    out = tmp_path / "autotune" / "silu_and_mul"
    out.mkdir(parents=True)
    (out / "results.json").write_text(json.dumps(result.to_json()))
    rig = templated_rig(tmp_path / "tune")
    st = loop.run(rig.ctx)
    (tmp_path / "readme_tune.json").write_text(json.dumps(
        {"summary": loop.summary(rig.ctx, st), "rounds": [r.to_json() for r in st.records]}))

    text = load_tool("acceptance_summary").table(tmp_path)
    lines = text.splitlines()
    tune = next(ln for ln in lines if ln.startswith("| tune silu_and_mul round 1 "))
    assert "| accepted |" in tune and "× [" in tune
    general = next(ln for ln in lines if ln.startswith("| autotune silu_and_mul general "))
    assert "| new best | faster |" in general and "× [" in general
    assert sum(ln.startswith("| autotune silu_and_mul llama-") for ln in lines) == 3
    assert "| autotune fused_add_rmsnorm | no result:" in text  # not run: said, not skipped
