"""`pragma-ncu tune` on a real GPU (skipped without one): a run killed in the middle of its
search resumes from the stored baseline and finishes with a verified best faster than it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pragma_ncu.infra.store import Store
from pragma_ncu.measure.records import RoundRecord

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "examples" / "templated" / "silu_and_mul.cu"


def _tune(tmp: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
        "PRAGMA_NCU_CACHE": str(tmp / "cache"), "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "pragma_ncu", "tune", "--store", str(tmp / "runs.sqlite"),
           "--no-llm", *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, cwd=tmp, start_new_session=True)


def test_killed_run_resumes_and_finishes(gpu_device, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("optuna")
    first = _tune(tmp_path, "--kernel", str(KERNEL), "--shape", "llama-7b", "--rounds", "1")
    assert first.stdout is not None
    seen = []
    deadline = time.monotonic() + 300
    for line in first.stdout:  # kill once round 1's search has begun
        seen.append(line)
        if "round 1/1" in line or time.monotonic() > deadline:
            break
    time.sleep(3.0)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert any("round 1/1" in s for s in seen), "".join(seen)
    with Store.open(tmp_path / "runs.sqlite") as store:
        (run,) = store.runs()
        done = [r for r, status in store.rounds(run.id) if status == "done"]
        assert run.status == "running" and done == [0]
    second = _tune(tmp_path, "--resume", "last", "--format", "json")
    out, _ = second.communicate(timeout=600)
    assert second.returncode == 0, out
    data = json.loads(out[out.index("{"):])
    rounds = [RoundRecord.from_json(r) for r in data["rounds"]]
    assert [r.round for r in rounds] == [0, 1]
    assert rounds[1].decision.accepted and rounds[1].candidate is not None
    assert rounds[1].candidate.verified
    assert data["summary"]["speedup"] > 1.3
    with Store.open(tmp_path / "runs.sqlite") as store:
        assert store.run(run.id).status == "done"
        assert [n for n, s in store.rounds(run.id)] == [0, 1]
