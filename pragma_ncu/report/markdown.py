"""Markdown as every renderer writes it (triage, explain, the trace): free text made safe where
a Markdown renderer would take it for HTML, code spans, table cells, fenced code blocks.

HTML entities (`&lt;`) are HTML's escape, not Markdown's: a terminal, an editor or a plain
viewer shows them as typed, and inside a code span every renderer does. So free text is escaped
the CommonMark way, with a backslash, and only where it must be: a `<` that would open a tag or
an autolink (`at::<unnamed>`, `Kernel2<cutlass_80_simt...>`; `relu_block<256>` and `a < b` open
nothing and stay as they are) and a `&` that would start an entity reference. Text inside code
spans is left alone. Only text inside an HTML block (`<details><summary>...</summary>`) is HTML
and takes entities: `html_text`.
"""

from __future__ import annotations

import html
import re

# A code span: a run of backticks, then anything up to a run of the same length.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_OPENS_HTML = re.compile(r"<(?=[A-Za-z/!?])")  # a tag, a closing tag, a comment, an autolink
_ENTITY = re.compile(r"&(?=#?\w+;)")  # &lt; &#60; &amp;


def text(value: str) -> str:
    """`value` as Markdown that renders as typed: outside its code spans, a `<` that would
    open HTML and a `&` that would start an entity get a backslash; nothing else changes."""
    out, last = [], 0
    for span in _CODE_SPAN.finditer(value):
        out += [_escape(value[last:span.start()]), span.group(0)]
        last = span.end()
    out.append(_escape(value[last:]))
    return "".join(out)


def code(value: str) -> str:
    """`value` as a code span, whatever backticks it holds (its fence is longer than any run
    of them inside, padded with a space where it starts or ends with one), on one line (a
    renderer shows a line break in a span as a space; in a heading it would end it). Every
    name a renderer writes (a kernel, a file, a metric) goes in one: nothing in it is HTML."""
    value = " ".join(value.splitlines())
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def cell(value: object, newline: str = " ") -> str:
    """A table cell: `text` with its pipes escaped (one would end the cell, even inside a
    code span) and its line breaks as `newline` (a cell is one line)."""
    return text(str(value)).replace("|", "\\|").replace("\n", newline)


def fence(value: str, lang: str = "") -> str:
    """A fenced code block longer than any run of backticks inside the text."""
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{value.rstrip()}\n{ticks}"


def html_text(value: str) -> str:
    """Text inside an HTML block (`<summary>...</summary>`): entities are right there."""
    return html.escape(value, quote=False)


def _escape(value: str) -> str:
    return _ENTITY.sub(r"\\&", _OPENS_HTML.sub(r"\\<", value))
