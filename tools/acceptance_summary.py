"""The table of tools/gpu_acceptance_check.sh: every acceptance verdict of the README's tune and
of the three templated autotunes (tools/gpu_redesign_check.sh's outputs), with the figures the
rule of `search/compare.py` decided on. Standard library only.

    python3 tools/acceptance_summary.py OUT

reads OUT/readme_tune.json (`tune --format json`) and OUT/autotune/<kernel>/results.json; a
missing or broken file is a row saying so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

KERNELS = ("silu_and_mul", "fused_add_rmsnorm", "merge_attn_states_lse")
HEAD = ("run", "verdict", "outcome", "speedup [95% interval]", "rounds", "samples", "noise %")


def _interval(low: float | None, high: float | None) -> str:
    return f"[{low:.3f}–{high:.3f}]" if low is not None and high is not None else "[none]"


def tune_rows(path: Path) -> list[list[Any]]:
    """One row per compared round of the tune run."""
    try:
        rounds = json.loads(path.read_text())["rounds"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [["tune silu_and_mul", f"no result: {exc}", "", "", "", "", ""]]
    rows = []
    for r in rounds[1:]:
        d = r["decision"]
        low, high = d.get("speedup_interval") or (None, None)
        speed = d.get("speedup_vs_best")
        rows.append([f"tune silu_and_mul round {r['round']}", d.get("acceptance", "")[:70],
                     d.get("outcome", "?"),
                     (f"{speed:.3f}× " if speed else "") + _interval(low, high), "", "",
                     f"{d['noise_pct']:.1f}" if d.get("noise_pct") is not None else ""])
    return rows


def autotune_rows(kernel: str, path: Path) -> list[list[Any]]:
    """The general verdict and each shape's."""
    try:
        data = json.loads(path.read_text())
        verdicts = [("general", data["general"]), *data["per_shape"].items()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return [[f"autotune {kernel}", f"no result: {exc}", "", "", "", "", ""]]
    rows = []
    for label, v in verdicts:
        c = v.get("comparison") or {}
        speed = c.get("speedup")
        said = "new best" if v["accepted"] else v["reason"][:70]
        figures = ((f"{speed:.3f}× " if speed else "") + _interval(c.get("low"), c.get("high"))
                   if c else "-")
        rows.append([f"autotune {kernel} {label}", said, c.get("outcome", "-"), figures,
                     c.get("rounds", ""), c.get("samples", ""),
                     f"{c['noise_pct']:.1f}" if c.get("noise_pct") is not None else ""])
    return rows


def table(out: Path) -> str:
    rows = tune_rows(out / "readme_tune.json")
    for kernel in KERNELS:
        rows += autotune_rows(kernel, out / "autotune" / kernel / "results.json")
    lines = ["| " + " | ".join(HEAD) + " |", "|" + " --- |" * len(HEAD)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(table(Path(sys.argv[1])))
