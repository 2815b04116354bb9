"""Markdown as every renderer writes it (triage, explain, the trace): free text made safe where
a Markdown renderer would take it for HTML, code spans, table cells, fenced code blocks.

HTML entities (`&lt;`) are HTML's escape, not Markdown's: a terminal, an editor or a plain
viewer shows them as typed, and inside a code span every renderer does. So free text is escaped
the CommonMark way, with a backslash, and only where it must be: a `<` that would open a tag or
an autolink (`at::<unnamed>`, `Kernel2<cutlass_80_simt...>`; `relu_block<256>` and `a < b` open
nothing and stay as they are) and a `&` that would start an entity reference. Text inside code
spans is left alone. Only text inside an HTML block (`<details><summary>...</summary>`) is HTML
and takes entities: `html_text`. `wrap` lays a whole document's prose out in lines of at most
PROSE_WIDTH characters, as every renderer's last step.
"""

from __future__ import annotations

import html
import re
import textwrap

# A code span: a run of backticks, then anything up to a run of the same length.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_OPENS_HTML = re.compile(r"<(?=[A-Za-z/!?])")  # a tag, a closing tag, a comment, an autolink
_ENTITY = re.compile(r"&(?=#?\w+;)")  # &lt; &#60; &amp;
PROSE_WIDTH = 100
# What opens a block where a line starts: a line continuing a paragraph must not start so.
_BLOCK_START = re.compile(r"(?:[-+*>#|]|\d{1,9}[.)])(?:\s|$)|=+\s*$")
# A list item's marker (with a task box) or a quote's, before the text of a line.
_PREFIX = re.compile(r"\s*(?:(?:[-+*]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|>\s?)")


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


def wrap(doc: str, width: int = PROSE_WIDTH) -> str:
    """`doc` with each prose line longer than `width` wrapped at spaces (never at a hyphen or
    inside a code span, a longer word kept whole), a list item's or a quote's continuation
    under its text. What
    a line break would change stays one line: fenced code blocks, indented code, table rows,
    headings and HTML lines; and a break is taken back where the next line would start with
    something that opens a block (a "- ", "1. ", "#", ">", "|")."""
    out, fence = [], ""  # fence: the marker of the code block the line is in
    for line in doc.split("\n"):
        stripped = line.lstrip()
        marker = _fence(stripped)
        if fence:
            fence = "" if marker.startswith(fence) else fence  # closed by as long a run
            out.append(line)
        elif marker:
            fence = marker
            out.append(line)
        elif len(line) <= width or line.startswith("    ") or stripped.startswith(
                ("|", "#", "<")):
            out.append(line)
        else:
            out += _wrapped(line, width)
    return "\n".join(out)


def _fence(stripped: str) -> str:
    """The run of backticks or tildes a line opens or closes a code block with, or ""."""
    for char in "`~":
        run = len(stripped) - len(stripped.lstrip(char))
        if run >= 3:
            return char * run
    return ""


def _wrapped(line: str, width: int) -> list[str]:
    prefix = _PREFIX.match(line)
    head = prefix.group(0) if prefix else ""
    under = "> " if head.strip() == ">" else " " * len(head)
    # a code span is one word: its spaces held by NUL (never in text) while the line wraps
    body = _CODE_SPAN.sub(lambda span: span.group(0).replace(" ", "\0"), line[len(head):])
    parts = [part.replace("\0", " ") for part in textwrap.wrap(
        body, width, initial_indent=head, subsequent_indent=under, break_on_hyphens=False,
        break_long_words=False)]
    out: list[str] = []
    for part in parts:
        if out and _BLOCK_START.match(part[len(under):]):
            out[-1] += " " + part[len(under):]  # it would open a block: keep it on the line
        else:
            out.append(part)
    return out or [line]
