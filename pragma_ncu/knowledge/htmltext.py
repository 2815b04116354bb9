"""HTML documentation pages → plain-text sections, one per heading (stdlib html.parser).

Written for Sphinx-built manuals such as Nsight Compute's: navigation, sidebars, scripts, styles,
permalink anchors and in-page tables of contents are dropped; tables keep one row per line with
cells separated by " | "; <pre> blocks keep their line breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

_SKIP_TAGS = frozenset({"script", "style", "nav", "header", "footer", "noscript", "svg", "button",
                        "form", "template", "iframe", "select", "head"})
_SKIP_ROLES = frozenset({"navigation", "search", "banner", "contentinfo"})
_SKIP_CLASSES = frozenset({"headerlink", "wy-nav-side", "wy-side-scroll", "wy-breadcrumbs",
                           "bd-sidebar", "bd-sidebar-primary", "bd-sidebar-secondary", "sidebar",
                           "sphinxsidebar", "toctree-wrapper", "related", "breadcrumbs",
                           "rst-footer-buttons", "prev-next-area", "bd-header", "bd-footer",
                           "copyright", "footer"})
_VOID = frozenset({"br", "img", "hr", "meta", "link", "input", "wbr", "col", "source", "area",
                   "base", "embed", "param", "track"})
_BLOCK = frozenset({"p", "div", "li", "tr", "dt", "dd", "pre", "table", "blockquote", "section",
                    "ul", "ol", "dl", "figure", "caption", "article", "main", "tbody", "thead"})
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


@dataclass(frozen=True)
class HtmlSection:
    """The text under one heading, up to the next heading of any level."""

    heading: str
    anchor: str  # the heading's id, or its enclosing section's; "" when it has none
    level: int
    text: str


class _SectionParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page_title = ""
        self.sections: list[HtmlSection] = []
        self._skip_tag = ""
        self._skip_depth = 0
        self._in_title = False
        self._pre = 0
        self._heading: tuple[int, str] | None = None  # (level, anchor) while inside a heading
        self._heading_text: list[str] = []
        self._current = HtmlSection("", "", 0, "")
        self._parts: list[str] = []
        self._anchor = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":  # inside <head>, which is otherwise skipped
            self._in_title = True
        if self._skipping_start(tag, dict(attrs)):
            return
        attr = dict(attrs)
        if attr.get("id") and tag in ("section", "div", "span", "a"):
            self._anchor = attr["id"] or ""
        if tag in _HEADINGS:
            self._heading = (_HEADINGS[tag], attr.get("id") or self._anchor)
            self._heading_text = []
        elif tag == "pre":
            self._pre += 1
            self._parts.append("\n")
        elif tag in ("td", "th"):
            self._parts.append(" | ")
        elif tag in _BLOCK or tag == "br":
            self._parts.append("\n")

    def _skipping_start(self, tag: str, attrs: dict[str, str | None]) -> bool:
        if self._skip_depth:
            if tag == self._skip_tag and tag not in _VOID:
                self._skip_depth += 1
            return True
        classes = set((attrs.get("class") or "").split())
        if tag in _VOID:
            return False
        if (tag in _SKIP_TAGS or attrs.get("role") in _SKIP_ROLES or classes & _SKIP_CLASSES
                or attrs.get("aria-hidden") == "true"):
            self._skip_tag, self._skip_depth = tag, 1
            return True
        return False

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if self._skip_depth:
            if tag == self._skip_tag:
                self._skip_depth -= 1
            return
        if tag in _HEADINGS and self._heading is not None:
            self._flush()
            level, anchor = self._heading
            heading = _clean_inline(" ".join(self._heading_text))
            self._current = HtmlSection(heading, anchor, level, "")
            self._heading = None
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            self._parts.append("\n")
        elif tag in _BLOCK:
            self._parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.page_title += data
        if self._skip_depth:
            return
        if self._heading is not None:
            self._heading_text.append(data)
        elif self._pre:
            self._parts.append(data)
        else:
            self._parts.append(re.sub(r"\s+", " ", data))

    def _flush(self) -> None:
        text = _clean_block("".join(self._parts))
        if text and (self._current.heading or text):
            self.sections.append(HtmlSection(self._current.heading, self._current.anchor,
                                             self._current.level, text))
        self._parts = []

    def close(self) -> None:
        super().close()
        self._flush()


def _clean_inline(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00b6", "")).strip()


def _clean_block(text: str) -> str:
    out: list[str] = []
    for raw in text.replace("\u00b6", "").split("\n"):
        line = raw.strip()
        line = line[2:] if line.startswith("| ") else line  # a table row's first cell marker
        if line.strip(" |"):
            out.append(line)
        elif out and out[-1]:
            out.append("")
    return "\n".join(out).strip()


def html_sections(html: str) -> tuple[str, list[HtmlSection]]:
    """The page's title (without the site suffix) and its sections in document order."""
    parser = _SectionParser()
    parser.feed(html)
    parser.close()
    title = _clean_inline(re.split(r"\s+[\u2014|]\s+", parser.page_title)[0])
    return title, parser.sections


def split_long(text: str, limit: int) -> list[str]:
    """`text` cut at paragraph (then line) boundaries into pieces of at most ~`limit` chars."""
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for para in re.split(r"\n\s*\n", text):
        for chunk in _hard_split(para, limit):
            if current and len(current) + len(chunk) + 2 > limit:
                pieces.append(current)
                current = ""
            current = f"{current}\n\n{chunk}" if current else chunk
    if current:
        pieces.append(current)
    return pieces


def _hard_split(para: str, limit: int) -> list[str]:
    if len(para) <= limit:
        return [para]
    out, current = [], ""
    for line in para.split("\n"):
        while len(line) > limit:  # one huge line (a minified table row): cut it
            out.append(line[:limit])
            line = line[limit:]
        if current and len(current) + len(line) + 1 > limit:
            out.append(current)
            current = ""
        current = f"{current}\n{line}" if current else line
    if current:
        out.append(current)
    return out
