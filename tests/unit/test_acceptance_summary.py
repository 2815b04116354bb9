"""tools/acceptance_summary.py (the table of tools/gpu_acceptance_check.sh) on a replayed
recorded search's results.json and a simulated tune run's JSON, as the commands write them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from pragma_ncu import loop
from tests.unit.test_tune_loop import templated_rig
from tests.unit.test_tuner_recorded import _replay

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("acceptance_summary",
                                                  ROOT / "tools" / "acceptance_summary.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_verdict_is_a_row_with_its_figures(tmp_path: Path) -> None:
    result, _ = _replay("silu_and_mul", "exhaustive", 500, jitter=1.0, seed=5)
    out = tmp_path / "autotune" / "silu_and_mul"
    out.mkdir(parents=True)
    (out / "results.json").write_text(json.dumps(result.to_json()))
    rig = templated_rig(tmp_path / "tune")
    st = loop.run(rig.ctx)
    (tmp_path / "readme_tune.json").write_text(json.dumps(
        {"summary": loop.summary(rig.ctx, st), "rounds": [r.to_json() for r in st.records]}))

    text = _tool().table(tmp_path)
    lines = text.splitlines()
    tune = next(ln for ln in lines if ln.startswith("| tune silu_and_mul round 1 "))
    assert "| accepted |" in tune and "× [" in tune
    general = next(ln for ln in lines if ln.startswith("| autotune silu_and_mul general "))
    assert "| new best | faster |" in general and "× [" in general
    assert sum(ln.startswith("| autotune silu_and_mul llama-") for ln in lines) == 3
    assert "| autotune fused_add_rmsnorm | no result:" in text  # not run: said, not skipped
