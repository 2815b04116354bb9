"""The winners of tools/gpu_house_check.sh's runs, one line each: best variant, its parameters,
the moves in it, its time and speedup, why the run stopped; with two OUT folders (before and
after a change), whether the winners are the same.

    python tools/house_winners.py OUT [OUT_AFTER]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RUNS = ("silu_and_mul", "moves")


def winner(out: Path, name: str) -> dict:
    try:
        summary = json.loads((out / f"{name}.json").read_text())["summary"]
    except (OSError, ValueError, KeyError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"variant": summary.get("best_variant"), "params": summary.get("best_params"),
            "moves_won": summary.get("moves_won"), "best_us": summary.get("best_us"),
            "speedup": summary.get("speedup"), "stop": summary.get("stop_reason")}


def same(a: dict, b: dict) -> bool:
    """The same winner: variant, parameters and moves (times differ run to run)."""
    keys = ("variant", "params", "moves_won")
    return "error" not in a and all(a.get(k) == b.get(k) for k in keys)


def main() -> int:
    outs = [Path(p) for p in sys.argv[1:3]]
    found = {name: [winner(out, name) for out in outs] for name in RUNS}
    for name, wins in found.items():
        for out, w in zip(outs, wins, strict=True):
            print(f"{name} [{out.name}]: {json.dumps(w, sort_keys=True, default=str)}")
        if len(wins) == 2:
            print(f"{name}: {'same winner' if same(*wins) else 'DIFFERENT winner'}")
    return 0 if len(outs) < 2 or all(same(*w) for w in found.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
