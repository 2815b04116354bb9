"""Print the calibration corpus results (Markdown) for docs/profiler.md: per collection and
split the share of kernels whose top finding is the expected cause, then one row per kernel.

    python tools/corpus_table.py            (from the repo root; needs no GPU)

The recordings are tests/fixtures/corpus/ (tools/record_corpus.py); the judging is
tests/corpus_eval.py, the same code CI runs in tests/unit/test_corpus.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.corpus_eval import COLLECTIONS, EXPECTED, SPLITS, Verdict, verdicts  # noqa: E402


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


def main() -> int:
    if "--quantities" in sys.argv:
        print(quantities())
        return 0
    judged = {coll: verdicts(coll) for coll in COLLECTIONS}
    print(summary(judged))
    print()
    print(per_kernel(judged))
    return 0


if __name__ == "__main__":
    sys.exit(main())
