"""The table of tools/gpu_explain_check.sh: explain's estimated saving for each fixed kernel of
examples/apps/pipeline.cu against the saving measured once it was fixed, and the time and
memory of explaining the 5,000-launch report from its .ncu-rep.

    python3 tools/explain_check_summary.py OUT

Measured two ways: from the reports (the kernel group's GPU time in BASE's ncu report less the
fixed kernel's in the all-fixed build's report, both under ncu's default set), and from the
application itself (its whole GPU time by CUDA events, BASE less BASE with that one fix).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from tabulate import tabulate

# fix flag -> (the kernel group in BASE, the kernel that replaces it in the fixed builds)
FIXES = {
    "fix_norm_scale": ("norm_scale", "norm_scale"),
    "fix_sgemm_small": ("sgemm_small", "sgemm_small_fixed"),
    "fix_silu_mul": ("silu_mul", "silu_mul_vec4"),
}
_APP_MS = re.compile(r"^(\S+) app_ms ([0-9.]+)", re.M)


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def groups(explained: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Kernel group name -> its entry in explain's JSON (the first of a name)."""
    out: dict[str, dict[str, Any]] = {}
    for g in ((explained or {}).get("application") or {}).get("groups", []):
        out.setdefault(g["name"], g)
    return out


def events(text: str) -> dict[str, float]:
    """build -> the application's GPU time in µs by CUDA events (events.txt)."""
    return {m.group(1): 1000 * float(m.group(2)) for m in _APP_MS.finditer(text)}


def _us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f}"


def _ratio(measured: float | None, estimate: float | None) -> str:
    return "n/a" if measured is None or not estimate else f"{measured / estimate:.2f}"


def rows(base: dict[str, Any] | None, fixed: dict[str, Any] | None,
         timed: dict[str, float]) -> list[list[str]]:
    before, after = groups(base), groups(fixed)
    out = []
    for flag, (name, replacement) in FIXES.items():
        g = before.get(name)
        estimate = g["saving_us"] if g else None
        by_report = (g["total_us"] - after[replacement]["total_us"]
                     if g and replacement in after else None)
        by_events = (timed["base"] - timed[flag] if "base" in timed and flag in timed
                     else None)
        out.append([name, str(g["rank"]) if g else "n/a", _us(g["total_us"] if g else None),
                    f"{100 * g['roofline_fraction']:.0f}%" if g and g["roofline_fraction"]
                    is not None else "n/a", _us(estimate), _us(by_report),
                    _ratio(by_report, estimate), _us(by_events), _ratio(by_events, estimate)])
    return out


HEADERS = ["kernel", "rank", "GPU time µs", "of roofline", "estimated saving µs",
           "measured µs (reports)", "measured/est.", "measured µs (events)", "measured/est."]


def totals(base: dict[str, Any] | None, fixed: dict[str, Any] | None,
           timed: dict[str, float]) -> list[str]:
    """The whole application: all three fixes together."""
    before = groups(base)
    estimate = sum(before[n]["saving_us"] or 0.0 for n, _ in FIXES.values() if n in before)
    lines = [f"All three fixes: estimated saving {_us(estimate)} µs"]
    if base and fixed:
        t0 = base["application"]["total_us"]
        t1 = fixed["application"]["total_us"]
        lines.append(f"  reports: application GPU time {_us(t0)} -> {_us(t1)} µs, saved "
                     f"{_us(t0 - t1)} µs ({_ratio(t0 - t1, estimate)} of the estimate)")
    if "base" in timed and "fixed" in timed:
        saved = timed["base"] - timed["fixed"]
        lines.append(f"  CUDA events: application {_us(timed['base'])} -> "
                     f"{_us(timed['fixed'])} µs, saved {_us(saved)} µs "
                     f"({_ratio(saved, estimate)} of the estimate)")
    return lines


def scale(out: Path) -> list[str]:
    data = _json(out / "many_scale.json")
    if not data or not data.get("results"):
        return ["explain on many.ncu-rep: no result (see many_scale.log)"]
    r = data["results"][0]
    walls = ", ".join(f"{run['wall_s']} s" for run in r["runs"])
    first = r["runs"][0]
    return [f"explain on many.ncu-rep ({first.get('launches', '?')} launches, "
            f"{first.get('groups', '?')} groups, reader {data['reader']}, {data['machine']}): "
            f"median {r['median_wall_s']} s ({walls}), peak memory {r['max_peak_rss_mb']} MB"]


def main() -> int:
    out = Path(sys.argv[1])
    base, fixed = _json(out / "explain_base.json"), _json(out / "explain_fixed.json")
    timed = events((out / "events.txt").read_text()) if (out / "events.txt").is_file() else {}
    device = (out / "gpu.txt").read_text().strip().splitlines()[-1] \
        if (out / "gpu.txt").is_file() else "unknown GPU"
    date = (out / "date.txt").read_text().strip() if (out / "date.txt").is_file() else ""
    print(f"explain's estimates against the fixes ({device}; {date})\n")
    print(tabulate(rows(base, fixed, timed), HEADERS, tablefmt="github", disable_numparse=True))
    print()
    print("\n".join([*totals(base, fixed, timed), *scale(out)]))
    check = out / "check.txt"
    if check.is_file():
        print(check.read_text().strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
