"""The many-GPU check's summary (tools/gpu_multi_check.sh): points per second on one GPU and on
two, the winners, and what a killed worker cost.

    python3 tools/multi_summary.py OUT      # reads OUT/{gpus1,gpus2,kill}/results.json

Prints a markdown table and the acceptance checks, and writes OUT/summary.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

RUNS = (("gpus1", "1 GPU"), ("gpus2", "2 GPUs"), ("kill", "2 GPUs, GPU 1's worker killed"))
DEATHS = ("worker_crash", "timeout")


def load(out: Path, name: str) -> dict[str, Any] | None:
    path = out / name / "results.json"
    return json.loads(path.read_text()) if path.is_file() else None


def winner(r: dict[str, Any]) -> tuple[str, float | None]:
    w = r["general"]["winner"] or {}
    point = ",".join(f"{k}={v}" for k, v in sorted((w.get("point") or {}).items()))
    return point or "-", w.get("objective")


def row(label: str, r: dict[str, Any]) -> list[str]:
    s = r["stats"]
    point, us = winner(r)
    shape = (r["general"]["winner"] or {}).get("shapes") or [{}]
    tflops = shape[0].get("flops") / (us * 1e6) if us and shape[0].get("flops") else None
    shares = ", ".join(f"{w['label']} {w['evaluated']}" + (f" ({w['deaths']} died)"
                                                          if w["deaths"] else "")
                       for w in r.get("workers", []))
    return [label, str(s["evaluated"]), f"{s['search_s']:.1f}",
            f"{r.get('points_per_s') or 0:.2f}", point, f"{us:.1f}" if us else "-",
            f"{tflops:.1f}" if tflops else "-", shares or "-", f"{s['wall_s']:.0f}"]


def checks(runs: dict[str, dict[str, Any]]) -> list[tuple[str, bool]]:
    out = []
    one, two, kill = runs.get("gpus1"), runs.get("gpus2"), runs.get("kill")
    if one and two:
        ratio = (two["points_per_s"] or 0) / (one["points_per_s"] or float("inf"))
        out.append((f"2 GPUs measure {ratio:.2f}x the points per second of 1 (>= 1.8)",
                    ratio >= 1.8))
        out.append((f"same winner on 1 and 2 GPUs ({winner(one)[0]} / {winner(two)[0]})",
                    winner(one)[0] == winner(two)[0]))
    if kill and two:
        evs = [e for e in kill["evaluations"] if e["status"] != "infeasible"]
        keys = [json.dumps(e["point"], sort_keys=True) for e in evs]
        died = sum(w["deaths"] for w in kill.get("workers", []))
        out.append((f"killed run: {len(evs)} points measured, {two['stats']['evaluated']} in "
                    "the undisturbed run, each once", len(evs) == two["stats"]["evaluated"]
                    and len(set(keys)) == len(keys)))
        lost = [e["status"] for e in evs if e["status"] in DEATHS]
        out.append((f"no point lost to the kill (deaths recorded: {died}; points left "
                    f"with a worker's death: {len(lost)})", died >= 1 and not lost))
        out.append((f"killed run's winner {winner(kill)[0]}",
                    winner(kill)[0] == winner(two)[0]))
    return out


def main() -> int:
    out = Path(sys.argv[1])
    runs = {name: r for name, _ in RUNS if (r := load(out, name)) is not None}
    headers = ["run", "points", "search s", "points/s", "winner", "winner µs", "TFLOP/s",
               "per GPU", "wall s"]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for name, label in RUNS:
        if name in runs:
            lines.append("| " + " | ".join(row(label, runs[name])) + " |")
    device = next((r.get("device") for r in runs.values() if r.get("device")), "?")
    print(f"device: {device}\n")
    print("\n".join(lines))
    print()
    results = checks(runs)
    for text, ok in results:
        print(f"- [{'x' if ok else ' '}] {text}")
    (out / "summary.json").write_text(json.dumps(
        {"device": device, "rows": {n: row(label, runs[n]) for n, label in RUNS if n in runs},
         "checks": [{"check": t, "ok": ok} for t, ok in results]}, indent=1))
    return 0 if results and all(ok for _, ok in results) else 1


if __name__ == "__main__":
    sys.exit(main())
