"""How long `pragma-ncu triage` takes, and how much memory, on a pair of application reports.

    python3 benchmarks/triage_scale.py BASE NEW [--repeat 3] [--reader auto|ncu_report|csv]
                                       [--format text|json] [--out results.json]

BASE and NEW are what `triage` accepts: two `.ncu-rep` files (on the GPU machine, with ncu), or
two folders of ncu CSV pages (anywhere). Each repetition runs `python -m pragma_ncu triage` as
a child process, the way a user or a CI step runs it, and measures its wall time and peak
resident memory: ru_maxrss of RUSAGE_CHILDREN, the largest of that process and its own children
(such as the ncu_report reader). Each repetition is measured from its own intermediate process,
because that maximum never goes down. Prints a table and, with --out, writes the figures with
the machine, the inputs and the date as JSON.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tabulate import tabulate  # noqa: E402

from benchmarks.child_process import run_pragma  # noqa: E402


def run_once(base: str, new: str, reader: str) -> dict[str, Any]:
    """One triage in a child process: wall seconds, peak RSS in MB, exit status."""
    proc = run_pragma("triage", base, new, "--reader", reader, "--format", "json")
    out, err = proc.stdout, proc.stderr
    row: dict[str, Any] = {"wall_s": proc.wall_s, "peak_rss_mb": proc.peak_rss_mb,
                           "exit": proc.returncode}
    if proc.returncode in (0, 1):
        data = json.loads(out)
        row.update(launches=[data["totals"]["launches_base"], data["totals"]["launches_new"]],
                   groups=len(data["kernels"]) + len(data["added"]) + len(data["removed"]),
                   summary=data["summary"])
    else:
        row["error"] = err.decode(errors="replace").strip()[-500:]
    return row


def measure(base: str, new: str, repeat: int, reader: str) -> list[dict[str, Any]]:
    """`repeat` runs, each in a fresh interpreter (the first may pay for a cold file cache).
    RUSAGE_CHILDREN's maximum only grows, so each run is measured in its own grandchild."""
    rows = []
    for i in range(repeat):
        child = subprocess.run([sys.executable, __file__, base, new, "--reader", reader,
                                "--one"], capture_output=True, text=True, check=False)
        if child.returncode != 0:
            raise SystemExit(f"run {i + 1} failed: {child.stderr.strip()[-500:]}")
        rows.append(json.loads(child.stdout))
        print(f"run {i + 1}/{repeat}: {rows[-1]['wall_s']} s, {rows[-1]['peak_rss_mb']} MB",
              file=sys.stderr, flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reader", choices=("auto", "ncu_report", "csv"), default="auto")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_once(args.base, args.new, args.reader)))
        return 0
    rows = measure(args.base, args.new, args.repeat, args.reader)
    walls = [r["wall_s"] for r in rows]
    result = {"date": datetime.date.today().isoformat(),
              "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
                         f"Python {platform.python_version()}",
              "base": args.base, "new": args.new, "reader": args.reader, "runs": rows,
              "median_wall_s": statistics.median(walls),
              "max_peak_rss_mb": max(r["peak_rss_mb"] for r in rows)}
    first = rows[0]
    print(tabulate([[Path(args.base).name + " vs " + Path(args.new).name,
                     "/".join(map(str, first.get("launches", []))), first.get("groups", ""),
                     f"{min(walls):.2f}", f"{statistics.median(walls):.2f}", f"{max(walls):.2f}",
                     f"{result['max_peak_rss_mb']:.0f}", first["exit"]]],
                   ["pair", "launches", "groups", "min s", "median s", "max s", "peak MB",
                    "exit"], tablefmt="github"))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
