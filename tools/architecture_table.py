"""Rewrite ARCHITECTURE.md's layer table from the one in tests/architecture.py (the table the
layer test checks); `--check` only says whether they differ (exit 1)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.architecture import markdown_table  # noqa: E402

BEGIN, END = "<!-- layers: begin -->", "<!-- layers: end -->"


def main(argv: list[str]) -> int:
    doc = ROOT / "ARCHITECTURE.md"
    text = doc.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    updated = f"{head}{BEGIN}\n{markdown_table()}{END}{tail}"
    if "--check" in argv:
        return 0 if updated == text else 1
    doc.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
