"""`tune` of the bundled CPU example on a loaded host: does each run either accept a real win or
say the host is too noisy to decide? (issue 25, acceptance 3; figures in docs/cpu.md)

    python tools/cpu_noise_check.py OUT [--runs 5] [--busy 2]

starts `--busy` processes that spin (`while True: pass`) for the whole check, runs `pragma-ncu
tune --kernel examples/cpu/conv1d.cpp --format json` `--runs` times beside them (each with its
own store under OUT/run-N/, at most 10 minutes each), stops the spinners it started, and
prints one row per run: the load average around it, baseline → best, the speedup, the verdict
of each round's side-by-side re-test with its interval and noise, and the stop reason. Every
run's JSON is kept as OUT/run-N/tune.json. With --busy 0 it measures the host as it is.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "examples" / "cpu" / "conv1d.cpp"
RUN_LIMIT_S = 600


def loadavg() -> str:
    """The 1-minute load average, or "?" where /proc is not there."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def spinners(count: int) -> list[subprocess.Popen[bytes]]:
    """`count` processes that keep a core busy until stopped (or for an hour at most)."""
    code = "import time\nend = time.time() + 3600\nwhile time.time() < end: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def tune(out: Path) -> dict[str, Any]:
    """One run; its `--format json` answer, or {"error": ...}."""
    out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pragma_ncu", "tune", "--kernel", str(KERNEL), "--store",
               str(out / "runs.sqlite"), "--format", "json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_LIMIT_S,
                              cwd=out)
    except subprocess.TimeoutExpired:
        return {"error": f"no answer in {RUN_LIMIT_S} s"}
    (out / "tune.log").write_text(done.stderr)
    try:
        data: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"error": f"exit {done.returncode}: {done.stderr.strip()[-300:]}"}
    (out / "tune.json").write_text(json.dumps(data, indent=1))
    return data


def verdicts(data: dict[str, Any]) -> str:
    """Each compared round's outcome, speedup interval and noise, as `r1 accepted 4.3x
    [4.1-4.5] noise 8%`."""
    parts = []
    for r in data.get("rounds", [])[1:]:
        d = r["decision"]
        if "outcome" not in d:  # a run of the rule before this one: its own words
            parts.append(f"r{r['round']} {'accepted' if d['accepted'] else 'not accepted'}: "
                         f"{d['acceptance'][:60]}")
            continue
        if not d["outcome"]:
            parts.append(f"r{r['round']} no comparison")
            continue
        low_high = d.get("speedup_interval")
        interval = f" [{low_high[0]:.2f}-{low_high[1]:.2f}]" if low_high else ""
        speed = d.get("speedup_vs_best")
        noise = d.get("noise_pct")
        parts.append(f"r{r['round']} {d['outcome']}"
                     + (f" {speed:.2f}x" if speed else "") + interval
                     + (f" noise {noise:.0f}%" if noise is not None else ""))
    return "; ".join(parts) or "-"


def row(number: int, before: str, after: str, data: dict[str, Any], wall: float) -> list[Any]:
    if "error" in data:
        return [number, f"{before}/{after}", "-", "-", "error", data["error"][:80], f"{wall:.0f}"]
    s = data["summary"]
    return [number, f"{before}/{after}", f"{s['baseline_us']:.1f} → {s['best_us']:.1f}",
            f"{s['speedup']:.2f}×" if s.get("speedup") else "-", verdicts(data),
            s.get("stop_reason", "")[:80], f"{wall:.0f}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--busy", type=int, default=2)
    args = parser.parse_args()
    busy = spinners(args.busy)
    rows = []
    try:
        time.sleep(3 if busy else 0)  # let the load average notice them
        for number in range(1, args.runs + 1):
            before, start = loadavg(), time.perf_counter()
            data = tune(args.out / f"run-{number}")
            rows.append(row(number, before, loadavg(), data, time.perf_counter() - start))
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(f"{args.busy} busy process(es); {time.strftime('%Y-%m-%d %H:%M')}")
    print(tabulate(rows, headers=["run", "load 1 min before/after", "baseline → best µs",
                                  "speedup", "side-by-side verdicts", "stop", "wall s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
