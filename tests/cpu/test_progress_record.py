"""tools/gpu_progress_record.sh works before it reaches the GPU machine: on the CPU example it
records autotune's and tune's live display as text frames (tmux) or a raw typescript
(script(1)), each on a 120-column terminal, and tables each run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    not (shutil.which("c++") or shutil.which("g++")) or not shutil.which("valgrind")
    or not (shutil.which("tmux") or shutil.which("script")),
    reason="needs a C++ compiler, valgrind, and tmux or script(1)")
BAR = re.compile(r"search: +\d+%\|.*\| \d+/32 points \[\d\d:\d\d<\d\d:\d\d")


def test_the_cpu_recording(tmp_path: Path) -> None:
    env = {**os.environ, "PRAGMA_NCU_CACHE": str(tmp_path / "cache"),
           "PRAGMA_NCU_PERF": str(tmp_path / "no-perf-here")}
    if not shutil.which("tmux"):
        env["RECORD_WITH"] = "script"
    proc = subprocess.run(["bash", "tools/gpu_progress_record.sh", str(tmp_path / "rec"),
                           "--cpu"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines()[1:3]}
    assert rows.keys() == {"autotune", "tune"} and all(r[1] == "0" for r in rows.values())
    rec = tmp_path / "rec"
    if env.get("RECORD_WITH") == "script":
        drawn = (rec / "autotune" / "typescript").read_text(errors="replace")
    else:
        frames = sorted((rec / "autotune").glob("frame-*.txt"))
        assert len(frames) >= 3
        drawn = "\n".join(f.read_text() for f in frames)
        assert all(len(line) <= 120 for f in frames for line in f.read_text().splitlines())
    assert BAR.search(drawn), drawn[-2000:]
    assert "INFO pragma_ncu." in (rec / "tune" / "run.log").read_text()
    with tarfile.open(rec / "recordings.tar.gz") as tar:
        names = tar.getnames()
    assert "summary.txt" in names and "tune/run.log" in names
    assert not any(n.endswith("run.sh") or "/out/" in n or "/store/" in n for n in names)
