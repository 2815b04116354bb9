"""A small reader of protobuf text format, enough for Nsight Compute's `.section` files.

`parse_pbtext` turns `Name: "x" Sub { Key: 1 }` into a list of (field, value) pairs where a
value is a string (quotes removed, adjacent strings joined) or a nested list of pairs. It needs no
schema, so fields ncu adds later do not break it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Union

PbValue = Union[str, "PbMessage"]
PbMessage = list[tuple[str, PbValue]]

_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*|[,;])
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<punct>[{}:<>\[\]])
  | (?P<word>[^\s{}:<>\[\]"',;\#]+)
""", re.VERBOSE)


class PbTextError(ValueError):
    """The text is not protobuf text format; the message says where."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise PbTextError(f"unexpected {text[pos:pos + 20]!r} at offset {pos}")
        kind = match.lastgroup or "ws"
        if kind != "ws":
            out.append((kind, match.group()))
        pos = match.end()
    return out


def _unquote(token: str) -> str:
    try:
        value = ast.literal_eval(token)
    except (ValueError, SyntaxError):
        return token[1:-1]
    return value if isinstance(value, str) else str(value)


def parse_pbtext(text: str) -> PbMessage:
    """Parse a whole message; PbTextError on unbalanced braces or stray tokens."""
    tokens = _tokens(text)
    message, pos = _message(tokens, 0, closing=None)
    if pos != len(tokens):
        raise PbTextError(f"unexpected {tokens[pos][1]!r} after the top-level message")
    return message


def _message(tokens: list[tuple[str, str]], pos: int,
             closing: str | None) -> tuple[PbMessage, int]:
    fields: PbMessage = []
    while pos < len(tokens):
        kind, value = tokens[pos]
        if kind == "punct" and value == closing:
            return fields, pos + 1
        if kind != "word":
            raise PbTextError(f"expected a field name, got {value!r}")
        name, pos = value, pos + 1
        if pos < len(tokens) and tokens[pos] == ("punct", ":"):
            pos += 1
        if pos >= len(tokens):
            raise PbTextError(f"field {name} has no value")
        kind, value = tokens[pos]
        if kind == "punct" and value in "{<":
            sub, pos = _message(tokens, pos + 1, "}" if value == "{" else ">")
            fields.append((name, sub))
        elif kind == "punct" and value == "[":
            pos = _list(tokens, pos + 1, name, fields)
        else:
            scalar, pos = _scalar(tokens, pos)
            fields.append((name, scalar))
    if closing is not None:
        raise PbTextError(f"missing {closing!r}")
    return fields, pos


def _scalar(tokens: list[tuple[str, str]], pos: int) -> tuple[str, int]:
    kind, value = tokens[pos]
    if kind == "word":
        return value, pos + 1
    if kind != "string":
        raise PbTextError(f"expected a value, got {value!r}")
    parts = []
    while pos < len(tokens) and tokens[pos][0] == "string":  # "a" "b" is "ab"
        parts.append(_unquote(tokens[pos][1]))
        pos += 1
    return "".join(parts), pos


def _list(tokens: list[tuple[str, str]], pos: int, name: str, fields: PbMessage) -> int:
    while pos < len(tokens) and tokens[pos] != ("punct", "]"):
        if tokens[pos] == ("punct", "{"):
            sub, pos = _message(tokens, pos + 1, "}")
            fields.append((name, sub))
        else:
            scalar, pos = _scalar(tokens, pos)
            fields.append((name, scalar))
    return pos + 1


def first(message: PbMessage, name: str) -> str:
    """The first scalar value of field `name`, or ""."""
    for key, value in message:
        if key == name and isinstance(value, str):
            return value
    return ""


def walk(message: PbMessage) -> Iterator[tuple[str, PbValue]]:
    """Every (field, value) pair, depth first, nested messages included."""
    for key, value in message:
        yield key, value
        if isinstance(value, list):
            yield from walk(value)
