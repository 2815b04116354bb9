"""How long `pragma-ncu explain` takes, and how much memory, on an application report.

    python3 benchmarks/explain_scale.py REPORT [REPORT ...] [--repeat 3]
                                        [--reader auto|ncu_report|csv] [--out results.json]
    python3 benchmarks/explain_scale.py --synthetic DIR [--repeat 3]

REPORT is what `explain` accepts: a `.ncu-rep` (on the GPU machine, with ncu) or a folder of
ncu CSV pages (anywhere). `--synthetic DIR` first writes a SYNTHETIC report there, 100 kernels x
50 launches made of rows recorded under ncu's default set (555 metric columns;
tests/synthetic_app.py), the heavy case a duration-only recording is not, and measures it.
Each repetition runs `python -m pragma_ncu explain REPORT --format json` as a child process, the
way a user or a CI step runs it, from its own intermediate process, and measures its wall time
and peak resident memory (ru_maxrss of RUSAGE_CHILDREN: that process and its own children, such
as the ncu_report reader; it never goes down, hence one intermediate process a run). Prints a
table and, with --out, writes the figures with the machine, the inputs and the date as JSON.
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

SYNTHETIC_KINDS = ("bandwidth_ok", "fma_bound", "sfu_bound", "copy_half", "rowsum_warp",
                   "odd_even")


def run_once(report: str, reader: str) -> dict[str, Any]:
    """One explain in a child process: wall seconds, peak RSS in MB, exit status, and what
    it found (launches, groups)."""
    proc = run_pragma("explain", report, "--reader", reader, "--format", "json")
    out, err = proc.stdout, proc.stderr
    row: dict[str, Any] = {"wall_s": proc.wall_s, "peak_rss_mb": proc.peak_rss_mb,
                           "exit": proc.returncode}
    if proc.returncode == 0:
        app = json.loads(out).get("application") or {}
        row.update(launches=app.get("launches", 1), groups=app.get("groups_in_report", 1))
    else:
        row["error"] = err.decode(errors="replace").strip()[-500:]
    return row


def measure(report: str, repeat: int, reader: str) -> list[dict[str, Any]]:
    rows = []
    for i in range(repeat):
        child = subprocess.run([sys.executable, __file__, report, "--reader", reader, "--one"],
                               capture_output=True, text=True, check=False)
        if child.returncode != 0:
            raise SystemExit(f"run {i + 1} failed: {child.stderr.strip()[-500:]}")
        rows.append(json.loads(child.stdout))
        print(f"{Path(report).name} run {i + 1}/{repeat}: {rows[-1]['wall_s']} s, "
              f"{rows[-1]['peak_rss_mb']} MB", file=sys.stderr, flush=True)
    return rows


def write_synthetic(folder: Path) -> Path:
    """100 kernels x 50 launches, layer by layer, from default-set rows (a raw page)."""
    import numpy as np

    from tests.synthetic_app import Launch, noisy, write_side

    rng = np.random.default_rng(27)
    names = [(f"work<{i}>", SYNTHETIC_KINDS[i % len(SYNTHETIC_KINDS)]) for i in range(100)]
    draws = {name: noisy(10_000 + 100 * i, 50, rng) for i, (name, _) in enumerate(names)}
    return write_side(folder, [Launch(kind, name, draws[name][layer])
                               for layer in range(50) for name, kind in names])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="*")
    parser.add_argument("--synthetic", type=Path, help="write the synthetic report here first")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reader", choices=("auto", "ncu_report", "csv"), default="auto")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_once(args.reports[0], args.reader)))
        return 0
    reports = [*args.reports, *([str(write_synthetic(args.synthetic))] if args.synthetic
                                else [])]
    if not reports:
        parser.error("give a REPORT or --synthetic DIR")
    results, table = [], []
    for report in reports:
        rows = measure(report, args.repeat, args.reader)
        walls = [r["wall_s"] for r in rows]
        results.append({"report": report, "runs": rows, "median_wall_s": statistics.median(walls),
                        "max_peak_rss_mb": max(r["peak_rss_mb"] for r in rows)})
        table.append([report, rows[0].get("launches", ""), rows[0].get("groups", ""),
                      f"{min(walls):.2f}", f"{statistics.median(walls):.2f}",
                      f"{max(walls):.2f}", f"{results[-1]['max_peak_rss_mb']:.0f}"])
    print(tabulate(table, ["report", "launches", "groups", "min s", "median s", "max s",
                           "peak MB"], tablefmt="github"))
    if args.out:
        args.out.write_text(json.dumps({
            "date": datetime.date.today().isoformat(), "reader": args.reader,
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
                       f"Python {platform.python_version()}", "results": results}, indent=1)
            + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
