"""`pragma-ncu tune --no-llm` with the source moves on a real GPU (skipped without one): the
tiled transpose of the calibration set, a kernel with no knobs, gets a moves round whose
variant is searched, verified at every shape (the odd one too) and profiled, and the best
written out is plain source. Its speed is the GPU check's to report (tools/gpu_moves_check.sh),
not this test's to assume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pragma_ncu.measure.records import RoundRecord

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "moves" / "tile_transpose.cu"


def test_a_kernel_without_knobs_gets_a_verified_moves_round(gpu_device, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("tree_sitter_cuda")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
        "PRAGMA_NCU_CACHE": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-m", "pragma_ncu", "tune", "--kernel", str(KERNEL), "--shape", "main",
         "--rounds", "1", "--budget", "12", "--no-llm", "--store", str(tmp_path / "runs.sqlite"),
         "--format", "json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=400)
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads(run.stdout)
    rounds = [RoundRecord.from_json(r) for r in data["rounds"]]
    assert rounds[0].decision.action == "moves", rounds[0].decision.reason
    assert "smem_pad" in [c.move for c in rounds[0].decision.moves]
    moved = rounds[1]
    assert moved.action == "moves" and moved.search["verified"] >= 2
    trial = next(t for t in moved.moves if t.move == "smem_pad")
    assert trial.status == "searched" and trial.knobs == {"PNCU_SMEM_PAD": [0, 1, 2]}
    assert moved.candidate is not None and moved.candidate.verified
    best = Path(data["files"]["best kernel"]).read_text()
    assert "PNCU_" not in best and "{%" not in best and "{{" not in best
