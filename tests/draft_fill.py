"""Filling a drafted spec's placeholders, as a user does by hand: the tests' stand-in for an
editor. Placeholders are replaced in the order they appear (the order `placeholders` lists
them): a quoted "<fill>" by TOML text, a <fill> inside a string by expression text. Comments,
which mention the placeholder too, are left as they are."""

from __future__ import annotations

import re
from collections.abc import Sequence

_TOKEN = re.compile(r'"<fill[^>]*>"|<fill[^>]*>')


def fill(text: str, values: Sequence[str]) -> str:
    """`text` with its placeholders replaced by `values`, in order; every one must be used."""
    pending = list(values)

    def next_value(match: re.Match[str]) -> str:
        if not pending:
            raise AssertionError(f"more placeholders than values at {match.start()}")
        return pending.pop(0)

    lines = []
    for line in text.splitlines(keepends=True):
        code, comment = _split_comment(line)
        lines.append(_TOKEN.sub(next_value, code) + comment)
    out = "".join(lines)
    if pending:
        raise AssertionError(f"{len(pending)} values left over: {pending}")
    return out


def _split_comment(line: str) -> tuple[str, str]:
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:i], line[i:]
    return line, ""


# What a user fills into the draft of examples/init/masked_bias_scale.cu (docs/own-kernel.md).
MASKED_BIAS_SCALE = (
    '"rows", "cols"',         # out
    '"rows"',                 # kept
    '"rows", "cols"',         # x
    '"cols"',                 # bias
    '"rows", "cols"',         # mask
    "1.25",                   # scale: 1 / (1 - p) for a dropout probability p = 0.2
    "4096",                   # rows
    "11008",                  # cols
)
