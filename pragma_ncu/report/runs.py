"""What `trace --list` prints: one line per run of the store, oldest first."""

from __future__ import annotations

import time
from collections.abc import Sequence

from tabulate import tabulate

from pragma_ncu.measure.traces import RunEntry
from pragma_ncu.report.trace import Table, fmt_us, fmt_x


def runs_table(entries: Sequence[RunEntry]) -> Table:
    """Each run: its id, when, the kernel, its status, rounds, baseline -> best, speedup."""
    rows = []
    for entry in entries:
        run, s = entry.run, entry.run.summary
        rows.append((run.id, time.strftime("%Y-%m-%d %H:%M", time.localtime(run.created)),
                     run.kernel, run.status, str(entry.rounds),
                     f"{fmt_us(s.get('baseline_us'))} → {fmt_us(s.get('best_us'))}",
                     fmt_x(s.get("speedup"))))
    return Table(("id", "created", "kernel", "status", "rounds", "baseline → best µs",
                  "speedup"), tuple(rows))


def runs_text(entries: Sequence[RunEntry], store: str) -> str:
    """The table, or a line saying the store holds no run."""
    table = runs_table(entries)
    if not table.rows:
        return f"no runs in {store}\n"
    return tabulate(table.rows, table.headers, disable_numparse=True) + "\n"
