"""Summarize autotune results.json files as one markdown table (for docs/tuner.md).

    python3 tools/tune_summary.py RUN_DIR [RUN_DIR ...]

One row per kernel and tuned shape: the incumbent's time, the chosen configuration's, the
speedup, % of the copy ceiling, plus the search's point counts and wall time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tabulate import tabulate


def rows(data: dict[str, Any]) -> list[list[Any]]:
    out = []
    stats = data["stats"]
    pruned = sum(stats["pruned"].values())
    for shape, verdict in data["per_shape"].items():
        w, i = verdict["winner"], verdict["incumbent"]
        wt = next(s for s in w["shapes"] if s["shape"] == shape)
        it = next((s for s in (i or {}).get("shapes", []) if s["shape"] == shape), None)
        ceiling = data.get("ceiling_gbps")
        pct = 100 * wt["gbps"] / ceiling if ceiling and wt.get("gbps") else None
        config = ",".join(f"{k}={v}" for k, v in sorted(w["point"].items()))
        out.append([data["kernel"], shape, it["median_us"] if it else None, config,
                    wt["median_us"], wt["noise_us"] / wt["median_us"] * 100,
                    verdict["speedup"], pct, "yes" if verdict["accepted"] else "no",
                    f"{stats['evaluated']}/{stats['space_size']} ({pruned} pruned)",
                    stats["wall_s"]])
    g = data["general"]
    if g["winner"]:
        config = ",".join(f"{k}={v}" for k, v in sorted(g["winner"]["point"].items()))
        inc = g["incumbent"]["objective"] if g["incumbent"] else None
        out.append([data["kernel"], "general (geo-mean)", inc, config,
                    g["winner"]["objective"], None, g["speedup"], None,
                    "yes" if g["accepted"] else "no", "", None])
    return out


def main(argv: list[str]) -> int:
    table = []
    for arg in argv:
        path = Path(arg)
        path = path / "results.json" if path.is_dir() else path
        table += rows(json.loads(path.read_text()))
    headers = ["kernel", "shape", "incumbent µs", "chosen configuration", "µs", "noise %",
               "speedup", "% ceiling", "beats incumbent", "evaluated", "wall s"]
    print(tabulate(table, headers=headers, floatfmt=".2f", tablefmt="github"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
