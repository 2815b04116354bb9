"""What `doctor` prints: each check, found or missing, and the fixes of those missing."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from pragma_ncu.infra.toolchain import Check


def doctor_lines(checks: Sequence[Check]) -> list[str]:
    """Each check (found or MISSING, and what), then the fixes of those missing."""
    rows = [[c.name, "ok" if c.ok else "MISSING", c.detail] for c in checks]
    lines = [tabulate(rows, headers=["check", "", "detail"], disable_numparse=True)]
    fixes = [f"- {c.name}: {c.fix}" for c in checks if not c.ok and c.fix]
    if fixes:
        lines.append("\nTo fix:\n" + "\n".join(fixes))
    return lines
