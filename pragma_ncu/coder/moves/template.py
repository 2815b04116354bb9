"""The moves' jinja2 text: a plain source with edits becomes a template whose rendering at the
knobs' defaults is the source byte for byte, and at any point a plain source a user can keep.

The source's own `{{`, `{%` and `{#` are escaped (so C++ brace initializers stay what they
are), and the declared `#define` knobs keep reaching nvcc as -D through a defines comment at
the top (`spec.template.defines_comment`), which renders to nothing: line numbers never move
at the defaults, so the profile's hot lines still name the user's lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pragma_ncu.coder.moves.base import Edit, decode
from pragma_ncu.spec.model import ParamValue
from pragma_ncu.spec.template import defines_comment, render_jinja

_OPENER = re.compile(r"\{(?=[{%#]|\Z)")  # a brace that would open (or could join) a tag
_LEFT_BRACE = "{{ '{' }}"


class MoveTemplateError(ValueError):
    """A move's edits do not give back the source at their defaults, or overlap another's: a
    move's own bug, which its caller turns into a refusal (never a user's error)."""


def literal(text: str) -> str:
    """`text` as template text that renders to itself."""
    return _OPENER.sub(_LEFT_BRACE, text)


def when(knob: str, on: str, off: str) -> str:
    """`on` (template text) where the knob is set, else `off` (plain text, escaped here)."""
    return "{% if " + knob + " %}" + on + "{% else %}" + literal(off) + "{% endif %}"


def insert(knob: str, on: str) -> str:
    """`on` (template text) where the knob is set, nothing at its default."""
    return "{% if " + knob + " %}" + on + "{% endif %}"


def value(knob: str) -> str:
    return "{{ " + knob + " }}"


def filled(text: str, values: Mapping[str, str]) -> str:
    """Plain `text` as template text, each placeholder of `values` (`@VEC@`) written as the
    template text it maps to (a knob's value, say)."""
    out = literal(text)
    for placeholder, template in values.items():
        out = out.replace(placeholder, template)
    return out


def compose(data: bytes, edits: Sequence[Edit], defines: Sequence[str] = ()) -> str:
    """The template of `data` with `edits` (sorted here; overlapping edits are an error), the
    parameters `defines` passed to nvcc as -D."""
    out = [defines_comment(tuple(defines))] if defines else []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end, e.last)):
        if e.start < pos:
            raise MoveTemplateError(f"an edit at byte {e.start} overlaps the one before it")
        out += [literal(decode(data[pos:e.start])), e.template]
        pos = e.end
    out.append(literal(decode(data[pos:])))
    return "".join(out)


def render(template: str, values: Mapping[str, ParamValue], name: str = "move") -> str:
    return render_jinja(template, dict(values), name)


def check_defaults(template: str, original: str, defaults: Mapping[str, ParamValue]) -> None:
    """Raise unless the template renders `original` exactly at `defaults`."""
    got = render(template, defaults)
    if got != original:
        line = next((i + 1 for i, (a, b) in enumerate(zip(got.splitlines(),
                                                          original.splitlines(), strict=False))
                     if a != b), min(len(got.splitlines()), len(original.splitlines())))
        raise MoveTemplateError(f"the template does not give back the source at its defaults "
                                f"(first difference at line {line})")


# --- edits that re-indent and take out whole lines ------------------------------------------

def indented(data: bytes, start: int, end: int, knob: str,
             skip: tuple[tuple[int, int], ...] = (), depth: int = 1) -> list[Edit]:
    """`depth` more levels of indentation, where `knob` holds, for the lines that begin in
    [start, end), but those inside the `skip` spans (lines another edit takes out). Each edit
    replaces a line's leading whitespace, so that a line another move inserts above it (an
    unroll pragma, at the line's start) keeps to itself."""
    out = []
    pos = data.find(b"\n", start, end)
    while pos != -1 and pos + 1 < end:
        line = pos + 1
        stop = line
        while data[stop:stop + 1] in (b" ", b"\t"):
            stop += 1
        if data[stop:stop + 1] not in (b"\n", b"") and not any(s <= line < e for s, e in skip):
            lead = decode(data[line:stop])
            out.append(Edit(line, stop, when(knob, literal(lead + "    " * depth), lead)))
        pos = data.find(b"\n", line, end)
    return out


def whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to its whole line (with its newline) when nothing else is on it."""
    line = data.rfind(b"\n", 0, start) + 1
    stop = data.find(b"\n", end)
    if data[line:start].strip() or (stop != -1 and data[end:stop].strip()):
        return start, end
    return line, (stop + 1 if stop != -1 else end)
