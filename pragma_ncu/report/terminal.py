"""Terminal text as every text renderer lays it out (explain, triage, doctor): prose wrapped to
the output's width, tables kept whole and fitted to it where a column of free text can wrap
inside its cells.

The width is the caller's (the CLI's: the terminal's, $COLUMNS, else DEFAULT_WIDTH), never
below MIN_WIDTH: a narrower screen gets the lines of a 60-column one rather than tables whose
columns hold a few letters each. A line is wrapped at spaces only: never at a hyphen, and a
word longer than the width (a metric name, a path, a command) is kept whole, so that what a
reader copies still works.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence

from tabulate import tabulate

DEFAULT_WIDTH = 100  # where the output is not a terminal and $COLUMNS is not set
MIN_WIDTH = 60


def clamp(width: int | None) -> int:
    """A usable width: `width`, else DEFAULT_WIDTH, and never below MIN_WIDTH."""
    return max(MIN_WIDTH, width or DEFAULT_WIDTH)


def wrap(line: str, width: int, indent: str = "  ", first: str = "") -> list[str]:
    """One line of prose as lines of at most `width` characters (a word longer than that
    stays whole): `first` before its first line, `indent` before the others. A line that is
    already short enough is kept as it is."""
    if len(first + line) <= width:
        return [first + line]
    return textwrap.wrap(line, width, initial_indent=first, subsequent_indent=indent,
                         break_on_hyphens=False, break_long_words=False) or [first]


def wrap_all(lines: Iterable[str], width: int, indent: str = "  ") -> list[str]:
    """Each line wrapped by `wrap`, its continuation lines indented by its own leading
    spaces plus `indent` (a bullet's text stays under the bullet)."""
    out = []
    for line in lines:
        lead = line[: len(line) - len(line.lstrip(" "))]
        out += wrap(line.lstrip(" "), width, lead + indent, lead)
    return out


def table(rows: Sequence[Sequence[str]], headers: Sequence[str], width: int,
          flexible: Mapping[int, int] | None = None, tablefmt: str = "simple") -> str:
    """A table of at most `width` characters where cutting its `flexible` columns (of free
    text: column -> the fewest characters it keeps) can make it so: the widest of them loses
    a character at a time, each line of a cut cell ending in "..."; a row stays one row, and
    the table is never cut through, so it stays wider where the other columns alone take
    more (JSON and Markdown keep every cell whole)."""
    text = tabulate(rows, headers, tablefmt=tablefmt, disable_numparse=True)
    over = max((len(line) for line in text.splitlines()), default=0) - width
    if over <= 0 or not flexible or not rows:
        return text
    limits = {column: max(len(part) for row in [headers, *rows]
                          for part in str(row[column]).splitlines() or [""])
              for column in flexible}
    while over > 0:  # narrow the widest flexible column that may still lose a character
        room = [c for c in limits if limits[c] > flexible[c]]
        if not room:
            break
        limits[max(room, key=lambda c: limits[c])] -= 1
        over -= 1
    cut = [[_cut_lines(str(cell), limits[i]) if i in limits else cell
            for i, cell in enumerate(row)] for row in rows]
    return tabulate(cut, headers, tablefmt=tablefmt, disable_numparse=True)


def _cut_lines(cell: str, limit: int) -> str:
    return "\n".join(line if len(line) <= limit else line[: limit - 3] + "..."
                     for line in cell.splitlines())


def short_name(name: str) -> str:
    """'at::native::reduce_kernel<512, 1>' -> 'reduce_kernel<512, 1>': the namespaces (the
    parts before a '::' outside template brackets) dropped."""
    depth, start = 0, 0
    for i, ch in enumerate(name):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if depth == 0 and name.startswith("::", i):
            start = i + 2
    return name[start:] or name
