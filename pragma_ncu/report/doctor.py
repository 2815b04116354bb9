"""What `doctor` prints: each check, found or missing, and the fixes of those missing."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from pragma_ncu.infra.toolchain import Check
from pragma_ncu.report import terminal


def doctor_lines(checks: Sequence[Check], width: int = terminal.DEFAULT_WIDTH) -> list[str]:
    """Each check (found or MISSING, and what), then the fixes of those missing, wrapped to
    `width` (the table stays whole)."""
    rows = [[c.name, "ok" if c.ok else "MISSING", c.detail] for c in checks]
    lines = [tabulate(rows, headers=["check", "", "detail"], disable_numparse=True)]
    fixes = [f"- {c.name}: {c.fix}" for c in checks if not c.ok and c.fix]
    if fixes:
        lines += ["", "To fix:", *terminal.wrap_all(fixes, terminal.clamp(width))]
    return lines
