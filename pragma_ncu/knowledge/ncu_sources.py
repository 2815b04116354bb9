"""Source adapters for Nsight Compute: its HTML manuals, its metric list, sections and rules."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from pragma_ncu.knowledge.extract import NCU_METRIC
from pragma_ncu.knowledge.pbtext import PbMessage, PbTextError, first, parse_pbtext, walk
from pragma_ncu.knowledge.segments import Document, Segment
from pragma_ncu.knowledge.sources import CrawlContext, Gathered, html_segments, read_text_file

# Manuals without metric knowledge (legal text, change logs) are not crawled.
_SKIPPED_MANUALS = frozenset({"ReleaseNotes", "CopyrightAndLicenses", "Archives", "EULA"})


class NcuDocs:
    """The HTML manuals under <install>/docs/<Manual>/index.html, one segment per heading."""

    name = "ncu-docs"
    profiler = "ncu"
    version = "1"
    description = "Nsight Compute manuals (HTML under <install>/docs)"

    def gather(self, ctx: CrawlContext) -> Gathered:
        docs = ctx.ncu_docs
        if docs is None:
            return Gathered(skipped="no Nsight Compute install found (use --ncu-docs DIR)")
        if not docs.is_dir():
            return Gathered(skipped=f"{docs} is not a folder")
        pages = sorted(docs.glob("*/index.html")) or sorted(docs.glob("*.html"))  # one page each
        pages = [p for p in pages if p.parent.name not in _SKIPPED_MANUALS
                 and p.stem not in _SKIPPED_MANUALS]
        if not pages:
            return Gathered(skipped=f"no <manual>/index.html pages under {docs}")
        return Gathered(tuple(Document(str(p), read_text_file(p)) for p in pages))

    def parse(self, doc: Document) -> list[Segment]:
        return html_segments(self.name, self.profiler, doc)


@dataclass(frozen=True)
class MetricRow:
    """One row of `ncu --query-metrics`."""

    name: str
    description: str
    type: str = ""
    unit: str = ""


class NcuMetricList:
    """`ncu --query-metrics --chip <chip>`: one segment per metric (no GPU needed)."""

    name = "ncu-metrics"
    profiler = "ncu"
    version = "1"
    description = "ncu --query-metrics --chip CHIP (metric names and descriptions)"

    def gather(self, ctx: CrawlContext) -> Gathered:
        if not ctx.ncu:
            return Gathered(skipped="ncu not found (put it on PATH or set PRAGMA_NCU_NCU)")
        argv = [ctx.ncu, "--query-metrics", "--chip", ctx.chip]
        result = ctx.run(argv, ctx.timeout_s)
        command = f"ncu --query-metrics --chip {ctx.chip}"
        if result.missing:
            return Gathered(skipped=f"{ctx.ncu} could not be run: {result.stderr.strip()}")
        if not result.ok or not result.stdout.strip():
            detail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
            return Gathered(skipped=f"{command} failed (exit {result.returncode}): {detail[0]}")
        return Gathered((Document(command, result.stdout, f"metrics of {ctx.chip}"),))

    def parse(self, doc: Document) -> list[Segment]:
        segments = []
        for row in parse_metric_table(doc.text):
            lines = [f"{row.name}: {row.description}" if row.description else row.name]
            lines += [f"Type: {row.type}"] if row.type else []
            lines += [f"Unit: {row.unit}"] if row.unit else []
            segments.append(Segment.make(self.name, self.profiler, "metric", row.name,
                                         "\n".join(lines), doc.origin))
        return segments


_DASHES = re.compile(r"^\s*-{3,}(\s+-{3,})*\s*$")
_NAME = re.compile(r"^[A-Za-z][\w.:]*$")


def parse_metric_table(text: str) -> list[MetricRow]:
    """Rows of the metric table: a header, dashed rulers, then `name  [type  unit]  description`
    rows whose description may wrap onto indented lines. Column positions come from the dashed
    ruler when there is one; otherwise a row is a name, whitespace, and the description."""
    lines = text.splitlines()
    rulers = [i for i, line in enumerate(lines[:60]) if _DASHES.match(line)]
    spans, columns, start = _columns(lines, rulers)
    rows: list[MetricRow] = []
    for line in lines[start:]:
        if not line.strip() or _DASHES.match(line) or line.startswith("=="):
            continue
        if line[0].isspace():  # a wrapped description
            if rows:
                last = rows[-1]
                rows[-1] = MetricRow(last.name, f"{last.description} {line.strip()}".strip(),
                                     last.type, last.unit)
            continue
        row = _row(line, spans, columns)
        if row is not None:
            rows.append(row)
    return rows


def _columns(lines: list[str], rulers: list[int]) -> tuple[list[tuple[int, int]], list[str], int]:
    if not rulers:
        return [], [], 0
    ruler = lines[rulers[0]]
    spans = [(m.start(), m.end()) for m in re.finditer(r"-{3,}", ruler)]
    header_at = next((i for i in rulers[:1] + [rulers[0] - 1, rulers[0] + 1]
                      if 0 <= i < len(lines) and "name" in lines[i].lower()), None)
    header = lines[header_at] if header_at is not None else ""
    columns = [_column_kind(header[s:e] if s < len(header) else "") for s, e in spans]
    last_ruler = max(i for i in rulers if i <= rulers[0] + 2)
    return spans, columns, last_ruler + 1


def _column_kind(label: str) -> str:
    lowered = label.lower()
    for kind in ("name", "type", "unit", "desc"):
        if kind in lowered:
            return kind
    return "desc"


def _row(line: str, spans: list[tuple[int, int]], columns: list[str]) -> MetricRow | None:
    name, _, rest = line.partition(" ")
    name = name.strip()
    if not _NAME.match(name) or ("__" not in name and not spans):
        return None
    if len(spans) < 2:
        return MetricRow(name, rest.strip())
    if spans[0][0] + len(name) >= spans[1][0]:  # the name overflows its column: split on gaps
        return _overflowed_row(name, rest, columns)
    cells = {kind: line[s:e].strip() for (s, e), kind in zip(spans[1:-1], columns[1:-1],
                                                              strict=True)}
    cells["desc"] = line[spans[-1][0]:].strip() if len(line) > spans[-1][0] else ""
    return MetricRow(name, cells.get("desc", ""), cells.get("type", ""), cells.get("unit", ""))


def _overflowed_row(name: str, rest: str, columns: list[str]) -> MetricRow:
    parts = re.split(r"\s{2,}", rest.strip())
    middle = columns[1:-1]
    if len(parts) < 2 or not middle:
        return MetricRow(name, rest.strip())
    cells = dict(zip(middle, parts[:-1], strict=False))  # empty cells cannot be told apart
    return MetricRow(name, parts[-1], cells.get("type", ""), cells.get("unit", ""))


class NcuSections:
    """<install>/sections/*.section: one segment per section with its metrics and labels."""

    name = "ncu-sections"
    profiler = "ncu"
    version = "1"
    description = "Nsight Compute section files (<install>/sections/*.section)"

    def gather(self, ctx: CrawlContext) -> Gathered:
        return _files(ctx.ncu_sections, "*.section", "section files")

    def parse(self, doc: Document) -> list[Segment]:
        name = Path(doc.origin).stem
        try:
            message = parse_pbtext(doc.text)
            ident = first(message, "Identifier") or name
            display, about = first(message, "DisplayName"), first(message, "Description")
            pairs = _section_metrics(message)
        except PbTextError:  # not as expected: take what the regex finds
            ident, display, about = name, name, ""
            pairs = re.findall(r'Label:\s*"([^"]*)"\s*Name:\s*"([^"]*)"', doc.text)
        lines = [f"Section: {display or ident} ({ident})"]
        lines += [f"Description: {about}"] if about else []
        lines += ["Metrics shown (label = metric):"]
        lines += [f"- {label} = {metric}" if label else f"- {metric}" for label, metric in pairs]
        return [Segment.make(self.name, self.profiler, "section", display or ident,
                             "\n".join(lines), doc.origin)]


def _section_metrics(message: PbMessage) -> list[tuple[str, str]]:
    pairs: dict[str, str] = {}
    for key, value in walk(message):
        if key != "Metrics" or not isinstance(value, list):
            continue
        metric = first(value, "Name")
        label = first(value, "Label")
        if metric and metric not in pairs:
            pairs[metric] = "" if "{" in label else label  # "{UNIT}: ..." is a placeholder
    return [(label, metric) for metric, label in pairs.items()]


class NcuRules:
    """<install>/sections/*.py rule scripts: one segment per rule (what it reads and advises)."""

    name = "ncu-rules"
    profiler = "ncu"
    version = "1"
    description = "Nsight Compute rule scripts (<install>/sections/*.py)"

    def gather(self, ctx: CrawlContext) -> Gathered:
        return _files(ctx.ncu_sections, "*.py", "rule scripts")

    def parse(self, doc: Document) -> list[Segment]:
        if not re.search(r"^def apply\(", doc.text, re.M):
            return []  # a helper module, not a rule
        facts = rule_facts(doc.text)
        title = facts.get("name") or facts.get("identifier") or Path(doc.origin).stem
        metrics = list(dict.fromkeys(m.group(1) for m in NCU_METRIC.finditer(doc.text)))
        lines = [f"Rule: {title} ({facts.get('identifier', Path(doc.origin).stem)})"]
        for key in ("section", "description", "docstring"):
            if facts.get(key):
                lines.append(f"{key.capitalize()}: {facts[key]}")
        lines.append("Metrics read: " + (", ".join(metrics) or "none found"))
        advice = facts.get("advice", "")
        if advice:
            lines += ["Advice it gives:", advice]
        return [Segment.make(self.name, self.profiler, "rule", title, "\n".join(lines),
                             doc.origin)]


_GETTERS = {"get_identifier": "identifier", "get_name": "name",
            "get_description": "description", "get_section_identifier": "section"}


def rule_facts(source: str) -> dict[str, str]:
    """A rule script's identifier, name, description, section, docstring and advice strings."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        found = re.findall(r'def (get_\w+)\(\):\s*return\s*"([^"]*)"', source)
        return {_GETTERS[k]: v for k, v in found if k in _GETTERS}
    facts = {"docstring": " ".join((ast.get_docstring(tree) or "").split())}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in _GETTERS:
            text = _returned_string(node)
            if text:
                facts[_GETTERS[node.name]] = text
    known = set(facts.values())
    advice = [s for s in _prose_strings(tree) if s not in known]
    facts["advice"] = "\n".join(f"- {s}" for s in advice[:6])
    return facts


def _returned_string(func: ast.FunctionDef) -> str:
    for node in ast.walk(func):
        if isinstance(node, ast.Return) and node.value is not None:
            text = _string_of(node.value)
            if text:
                return text
    return ""


def _string_of(node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):  # f"...{x}...": keep the words, mark the holes
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "{...}"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _string_of(node.left) + _string_of(node.right)
    return ""


def _prose_strings(tree: ast.Module) -> list[str]:
    """Long string literals with several words: the messages a rule shows."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr | ast.BinOp) or (
                isinstance(node, ast.Constant) and isinstance(node.value, str)):
            text = " ".join(_string_of(node).split())
            if len(text) >= 60 and text.count(" ") >= 8 and not any(text in s for s in out):
                out = [s for s in out if s not in text] + [text]
    return out


def _files(folder: Path | None, pattern: str, what: str) -> Gathered:
    if folder is None:
        return Gathered(skipped="no Nsight Compute install found (use --sections DIR)")
    if not folder.is_dir():
        return Gathered(skipped=f"{folder} is not a folder")
    paths = sorted(folder.glob(pattern))
    if not paths:
        return Gathered(skipped=f"no {what} ({pattern}) in {folder}")
    return Gathered(tuple(Document(str(p), read_text_file(p)) for p in paths))
