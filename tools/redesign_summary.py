"""The short table of tools/gpu_redesign_check.sh: the README's first command (`tune` of the
silu_and_mul template) and `autotune` of the three templated examples, beside the figures the
docs recorded on an H200 before the redesign (docs/tune.md, docs/tuner.md). Standard library
only (the GPU machine has no wheels beyond its image).

    python3 tools/redesign_summary.py OUT

reads OUT/readme_tune.json (the tune's `--format json`) and OUT/autotune/<kernel>/results.json;
a missing or broken file is a row saying so.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

LLAMA = ("llama-7b", "llama-13b", "llama-70b")
# kernel: (baseline µs, best µs, speedup, configuration), geomean of the three LLaMA shapes
TUNE_DOC = (133.69, 75.61, 1.77, "BLOCK=512,ROWS=1,VEC=8")  # docs/tune.md (--target 0.97)
AUTOTUNE_DOC = {  # docs/tuner.md, "Results on an NVIDIA H200"
    "silu_and_mul": (133.92, 75.67, 1.77, "BLOCK=512,ROWS=1,VEC=8"),
    "fused_add_rmsnorm": (83.49, 46.39, 1.80, "BLOCK=256,CACHE_ROW=True,VEC=8"),
    "merge_attn_states_lse": (270.46, 35.57, 7.60, "BLOCK=64,HEADS_PER_BLOCK=16,VEC=4"),
}


def config(point: dict[str, Any] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((point or {}).items()))


def geomean(times: dict[str, float], shapes: tuple[str, ...] = LLAMA) -> float | None:
    values = [times[s] for s in shapes if s in times]
    if len(values) != len(shapes):
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def tune_row(path: Path) -> list[Any]:
    """The README command's run: baseline and best at the LLaMA shapes (it times every shape of
    the spec; the odd shape is left out of the geomean, as in docs/tune.md)."""
    try:
        data = json.loads(path.read_text())
        rounds, summary = data["rounds"], data["summary"]
        first, best = rounds[0]["best_after"], rounds[-1]["best_after"]
        base, final = geomean(first["times_us"]), geomean(best["times_us"])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        return ["tune silu_and_mul (README)", f"no result: {exc}", "", "", "", _doc(TUNE_DOC)]
    speedup = base / final if base and final else None
    return ["tune silu_and_mul (README)", _us(base, final), _x(speedup),
            config(summary.get("best_params")),
            f"{len(rounds) - 1} rounds; {summary.get('stop_reason', '')}", _doc(TUNE_DOC)]


def autotune_row(kernel: str, path: Path) -> list[Any]:
    try:
        general = json.loads(path.read_text())["general"]
        winner, incumbent = general["winner"], general["incumbent"]
        stats = json.loads(path.read_text())["stats"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"autotune {kernel}", f"no result: {exc}", "", "", "",
                _doc(AUTOTUNE_DOC[kernel])]
    base = incumbent["objective"] if incumbent else None
    final = winner["objective"] if winner else None
    return [f"autotune {kernel}", _us(base, final), _x(general.get("speedup")),
            config(winner and winner["point"]),
            f"{stats['evaluated']}/{stats['space_size']} points, {stats['wall_s']:.0f} s",
            _doc(AUTOTUNE_DOC[kernel])]


def _us(base: float | None, final: float | None) -> str:
    show = lambda v: f"{v:.2f}" if v else "?"  # noqa: E731
    return f"{show(base)} → {show(final)} µs"


def _x(speedup: float | None) -> str:
    return f"{speedup:.2f}×" if speedup else "?"


def _doc(doc: tuple[float, float, float, str]) -> str:
    return f"{doc[0]:.2f} → {doc[1]:.2f} µs, {doc[2]:.2f}×, {doc[3]}"


def table(out: Path) -> str:
    rows = [tune_row(out / "readme_tune.json")]
    rows += [autotune_row(k, out / "autotune" / k / "results.json") for k in AUTOTUNE_DOC]
    head = ["run", "geomean of the LLaMA shapes", "speedup", "best configuration", "search",
            "H200 in the docs"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(table(Path(sys.argv[1])))
