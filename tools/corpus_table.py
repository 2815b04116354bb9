"""Print the calibration corpus results (Markdown) for docs/profiler.md: per collection and
split the share of kernels whose top finding is the expected cause, then one row per kernel.

    python tools/corpus_table.py            (from the repo root; needs no GPU)
    python tools/corpus_table.py --roofline (verdicts and the attainable roofline, by split)

The recordings are tests/fixtures/corpus/ (tools/record_corpus.py); the judging is
tests/corpus_eval.py, the same code CI runs in tests/unit/test_corpus.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.corpus_eval import (  # noqa: E402
    AT_ROOFLINE,
    COLLECTIONS,
    EXPECTED,
    SPLITS,
    Verdict,
    verdicts,
)


def _cell(v: Verdict) -> str:
    mark = "✓" if v.right else "✗"
    shown = v.top if v.right else f"{v.top} (expected {v.expected})"
    hidden = v.expected != EXPECTED[v.kernel]["cause"]  # what this collection can show instead
    return f"{mark} {shown}" + (" ¹" if hidden else "")


def summary(judged: dict[str, list[Verdict]]) -> str:
    rows = []
    for split in (*SPLITS, "all"):
        row = [split]
        for coll in COLLECTIONS:
            vs = [v for v in judged[coll] if split in ("all", v.split)]
            right = sum(v.right for v in vs)
            row.append(f"{right}/{len(vs)} ({right / len(vs):.0%})")
        rows.append(row)
    return tabulate(rows, ["split", *COLLECTIONS], tablefmt="github")


def per_kernel(judged: dict[str, list[Verdict]]) -> str:
    rows = []
    for i, name in enumerate(EXPECTED):
        cells = [judged[c][i] for c in COLLECTIONS]
        rows.append([f"`{name}`", EXPECTED[name]["split"], EXPECTED[name]["cause"],
                     *[_cell(v) for v in cells]])
    return tabulate(rows, ["kernel", "split", "cause", "default set", "--set full",
                           "pragma-ncu profile"], tablefmt="github")


def quantities() -> str:
    """The order of preference of each quantity's sources (docs/profiler.md)."""
    from pragma_ncu.backends.cuda.diagnosis.quantities import QUANTITY_LIST

    rows = [[q.name, q.meaning, "<br>".join(f"{i}. `{s.label}`" for i, s in
                                            enumerate(q.sources, 1)), q.collect]
            for q in QUANTITY_LIST]
    return tabulate(rows, ["quantity", "meaning", "read from (first present wins)",
                           "collected by"], tablefmt="github")


def roofline(judged: dict[str, list[Verdict]]) -> str:
    """Per split and collection: kernels left without a verdict ('none'), the kernels planted
    at their roofline that read at 90% of their attainable roofline or more, and the median
    attainable fraction of the others (python tools/corpus_table.py --roofline)."""
    rows = []
    for split in (*SPLITS, "all"):
        for coll in COLLECTIONS:
            vs = [v for v in judged[coll] if split in ("all", v.split)]
            at = [v for v in vs if v.kernel in AT_ROOFLINE]
            near = sum((v.diagnosis.roofline.attainable_fraction or 0.0) >= 0.9 for v in at)
            rest = sorted(v.diagnosis.roofline.attainable_fraction or 0.0 for v in vs
                          if v.kernel not in AT_ROOFLINE)
            rows.append([split, coll, f"{sum(v.top == 'none' for v in vs)}/{len(vs)}",
                         f"{near}/{len(at)}", f"{100 * rest[len(rest) // 2]:.0f}%"])
    return tabulate(rows, ["split", "collection", "no verdict", "at roofline >= 90%",
                           "median % of roofline, the others"], tablefmt="github")


def main() -> int:
    if "--quantities" in sys.argv:
        print(quantities())
        return 0
    if "--roofline" in sys.argv:
        print(roofline({coll: verdicts(coll) for coll in COLLECTIONS}))
        return 0
    judged = {coll: verdicts(coll) for coll in COLLECTIONS}
    print(summary(judged))
    print()
    print(per_kernel(judged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
