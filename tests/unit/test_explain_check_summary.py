"""tools/explain_check_summary.py, the table of tools/gpu_explain_check.sh, on an OUT folder
made of the recorded pipeline pair: NEW's norm_scale is FIX_NORM_SCALE (one thread per element
instead of 32 blocks), so its row compares explain's estimate on BASE with a real fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from pragma_ncu.cli.main import cli
from tools.explain_check_summary import events

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = ROOT / "tests" / "fixtures" / "apps" / "pipeline"


def test_the_summary_tables_estimate_against_measured(tmp_path):
    for name, side in (("explain_base.json", "base"), ("explain_fixed.json", "new")):
        result = CliRunner().invoke(cli, ["explain", str(PIPELINE / side), "--format", "json"])
        assert result.exit_code == 0
        (tmp_path / name).write_text(result.output)
    (tmp_path / "events.txt").write_text("base app_ms 9.5000 (runs: 9.5 9.4)\n"
                                         "fix_norm_scale app_ms 5.6500 (runs: 5.65)\n")
    (tmp_path / "gpu.txt").write_text("name, driver_version\nNVIDIA H200, 580.159.04\n")
    (tmp_path / "many_scale.json").write_text(json.dumps({
        "reader": "auto", "machine": "x86_64, 16 CPUs", "results": [{
            "median_wall_s": 9.1, "max_peak_rss_mb": 170.0,
            "runs": [{"wall_s": 9.0, "launches": 5000, "groups": 100}]}]}))
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "explain_check_summary.py"),
                          str(tmp_path)], capture_output=True, text=True, check=True).stdout
    row = next(line for line in out.splitlines() if line.startswith("| norm_scale"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:5] == ["1", "4,125.9", "5%", "3,923.0"]
    assert cells[5:7] == ["3,846.8", "0.98"]  # BASE 4.13 ms, NEW 279 µs: within 2%
    assert cells[7:9] == ["3,850.0", "0.98"]  # the events given above
    assert "| sgemm_small" in out and "n/a" in out  # no fixed build in this OUT
    assert "NVIDIA H200, 580.159.04" in out and "median 9.1 s" in out and "170.0 MB" in out


def test_event_timings_are_read_per_build():
    assert events("base app_ms 9.5 (runs: 9.5)\nfixed app_ms 4.25 (runs: 4.2)\nnoise\n") == {
        "base": 9500.0, "fixed": 4250.0}
