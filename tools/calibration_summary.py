"""The table of tools/gpu_calibration_check.sh: for each run (idle GPUs, then GPU 1 kept busy
by another process) every GPU's calibration figure, its ratio to the others' median, whether
the pool excluded it, and the points it then measured. Standard library only.

    python3 tools/calibration_summary.py OUT     # reads OUT/{idle,loaded}/results.json

Exit 0 when both runs have a calibration and the idle one excluded no GPU.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

RUNS = (("idle", "idle GPUs"), ("loaded", "GPU 1 shared with a busy process"))
HEADERS = ["run", "GPU", "calibration µs", "noise %", "x others' median", "excluded",
           "points measured", "re-tested"]


def load(out: Path, name: str) -> dict[str, Any] | None:
    try:
        data = json.loads((out / name / "results.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def rows(label: str, data: dict[str, Any] | None) -> list[list[str]]:
    """One row per GPU of a run, or one saying what is missing."""
    if data is None:
        return [[label, "-", "no result (see the run's .err)", "", "", "", "", ""]]
    cal = data.get("calibration")
    if not cal:
        return [[label, "-", "no calibration", "", "", "", "", ""]]
    points = {w["label"]: w.get("evaluated", 0) for w in data.get("workers", [])}
    retest = (data.get("retest_device") or {}).get("label", "")
    out = []
    for d in cal["devices"]:
        us, rel = d.get("median_us"), d.get("relative")
        out.append([label, d["label"], f"{us:.2f}" if us else d.get("problem") or "-",
                    f"{100 * d.get('noise', 0.0):.1f}", f"{rel:.3f}" if rel else "-",
                    "yes" if d["label"] in cal["excluded"] else "no",
                    str(points.get(d["label"], "")), "yes" if d["label"] == retest else ""])
    return out


def table(all_rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in all_rows)])


def checks(runs: dict[str, dict[str, Any] | None]) -> list[tuple[str, bool]]:
    idle, loaded = runs.get("idle"), runs.get("loaded")
    idle_cal = (idle or {}).get("calibration") or {}
    loaded_cal = (loaded or {}).get("calibration") or {}
    return [("idle: every GPU calibrated", bool(idle_cal.get("devices"))),
            ("idle: no GPU excluded", bool(idle_cal) and not idle_cal.get("excluded")),
            ("loaded: every GPU calibrated", bool(loaded_cal.get("devices")))]


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(".")
    runs = {name: load(out, name) for name, _ in RUNS}
    print(table([r for name, label in RUNS for r in rows(label, runs[name])]))
    loaded = (runs.get("loaded") or {}).get("calibration") or {}
    print(f"\nloaded run: excluded {', '.join(loaded.get('excluded', [])) or 'none'} "
          f"(the calibration kernel: {loaded.get('kernel', '?')}, threshold "
          f"{100 * loaded.get('slower_by', 0.1):.0f}% and the noise)")
    results = checks(runs)
    for name, ok in results:
        print(f"- {name}: {'yes' if ok else 'NO'}")
    return 0 if all(ok for _, ok in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
