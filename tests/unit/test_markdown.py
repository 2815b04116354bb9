"""Clean Markdown from every command that writes it (triage, explain, trace): no HTML entity
outside an HTML block (a terminal or editor shows `-&gt;` as typed), nothing a renderer would
take for a tag (`at::<unnamed>` vanishes on GitHub), code spans left as typed, and no rule said
twice. Checked on the recorded fixtures (tests/fixtures/apps, regressions, profiles) and the
committed traces (docs/traces)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pragma_ncu.api import explain, triage
from pragma_ncu.infra.store import RunRow
from pragma_ncu.measure.records import RoundRecord
from pragma_ncu.measure.traces import Trace
from pragma_ncu.profile.read import read_csv_folder
from pragma_ncu.report import markdown as md
from pragma_ncu.report.application import groups_text
from pragma_ncu.report.application import overview_markdown as app_overview_markdown
from pragma_ncu.report.diagnosis import explain_markdown
from pragma_ncu.report.trace import render_markdown
from pragma_ncu.report.triage import report_markdown
from pragma_ncu.report.triage_overview import overview_markdown

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
PAIRS = sorted([*(FIXTURES / "apps").glob("*/base"), *(FIXTURES / "regressions").glob("*/base")])
PROFILES = sorted(p for p in (FIXTURES / "profiles").iterdir() if p.is_dir())
TRACES = sorted((ROOT / "docs" / "traces").glob("*.h200.json"))

OPENS_HTML = re.compile(r"(?<!\\)<[A-Za-z/!?]")
ENTITY = re.compile(r"(?<!\\)&#?\w+;")
HTML_LINE = re.compile(r"^\s*</?(details|summary)\b")


def _code_spans_out(line: str) -> str:
    return re.sub(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", " ", line)


def problems(doc: str) -> list[str]:
    """What a Markdown renderer would not show as typed: entities and tag openers outside code
    (fenced blocks and spans) and outside HTML lines; a raw '<' inside an HTML line's text."""
    out, fenced = [], False
    for line in doc.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if HTML_LINE.match(line):
            inner = re.sub(r"</?(details|summary)>", "", line)
            if "<" in inner or ">" in inner:
                out.append(f"raw bracket in HTML: {line}")
            continue
        prose = _code_spans_out(line).replace("<br>", " ")
        out += [f"{kind}: {line}" for kind, rx in (("tag", OPENS_HTML), ("entity", ENTITY))
                if rx.search(prose)]
    return out


def repeated_rules(doc: str) -> list[str]:
    """A rule named twice in one 'ncu now reports' list, or one bullet said twice in a
    section."""
    out = []
    for listed in re.findall(r"ncu now reports: ([^.]*)\.", doc):
        names = [item.split(" (")[0] for item in listed.split(", ")]
        if len(names) != len(set(names)):
            out.append(listed)
    prose = re.sub(r"^```.*?^```", "", doc, flags=re.MULTILINE | re.DOTALL)  # a diff's lines
    for section in re.split(r"^#+ ", prose, flags=re.MULTILINE):  # are no bullets
        bullets = [ln for ln in section.splitlines() if ln.startswith("- ")]
        out += [b for b in set(bullets) if bullets.count(b) > 1]
    return out


# --- the escaping itself ------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "escaped"), [
    ("at::<unnamed>::softmax<float>", r"at::\<unnamed>::softmax\<float>"),
    ("relu_block<256> -> relu_block<512>", "relu_block<256> -> relu_block<512>"),
    ("sectors/request <= 4, a < b, x<3", "sectors/request <= 4, a < b, x<3"),
    ("see <https://docs.nvidia.com> </b> <!-- x -->",
     r"see \<https://docs.nvidia.com> \</b> \<!-- x -->"),
    ("&lt; is an entity, &#60; too; &hist[k] and a & b are not",
     r"\&lt; is an entity, \&#60; too; &hist[k] and a & b are not"),
    ("Look at k.cu:3 (`std::vector<float> v; if (a<b)`)",
     "Look at k.cu:3 (`std::vector<float> v; if (a<b)`)"),
    ("``a ` <b>`` then <b>", r"``a ` <b>`` then \<b>"),
])
def test_text_escapes_only_what_a_renderer_would_take_for_html(raw: str, escaped: str) -> None:
    assert md.text(raw) == escaped
    assert not problems(md.text(raw))


def test_code_spans_cells_and_html_text() -> None:
    assert md.code("k<float>") == "`k<float>`"
    assert md.code("a`b") == "``a`b``" and md.code("`x") == "`` `x ``"
    assert md.cell("`a|b` <T>\nnext") == r"`a\|b` \<T> next"
    assert md.cell("one\ntwo", "<br>") == "one<br>two"
    assert md.html_text("k<256> -> k<512>") == "k&lt;256&gt; -&gt; k&lt;512&gt;"


@settings(max_examples=200, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("ab<>&;#/!?` 1x\n")), max_size=40))
def test_no_text_leaves_a_tag_or_an_entity(raw: str) -> None:
    escaped = md.text(raw)
    assert not problems(escaped.replace("\n", " ")), (raw, escaped)
    assert escaped.replace("\\<", "<").replace("\\&", "&") == raw  # nothing else changes


# --- every Markdown the commands write, on recorded inputs ---------------------------------------


@pytest.mark.parametrize("base", PAIRS, ids=lambda p: p.parent.name)
def test_triage_markdown_is_clean(base: Path) -> None:
    report = triage(base, base.parent / "new")
    for doc in (overview_markdown(report, show_all=True), report_markdown(report)):
        assert not problems(doc), problems(doc)
        assert not repeated_rules(doc), repeated_rules(doc)


def test_names_keep_their_brackets_and_a_rule_is_named_once() -> None:
    torch = triage(FIXTURES / "apps" / "torch_block" / "base",
                   FIXTURES / "apps" / "torch_block" / "new")
    doc = overview_markdown(torch)
    assert r"at::\<unnamed>::cunn_SpatialSoftMaxForward\<c10::BFloat16" in doc
    pipeline = triage(FIXTURES / "apps" / "pipeline" / "base",
                      FIXTURES / "apps" / "pipeline" / "new")
    doc = overview_markdown(pipeline)
    assert "ncu now reports: WorkloadImbalance (est. 7%)." in flat(doc)  # was named 3 times
    assert "<summary>histogram256: regression" in doc
    detail = report_markdown(pipeline)
    assert "## histogram256  [same kernel]  REGRESSION" in detail
    assert flat(detail).count("ncu now reports: WorkloadImbalance (est. 7%).") == 1
    divergence = report_markdown(triage(FIXTURES / "regressions" / "divergence" / "base",
                                        FIXTURES / "regressions" / "divergence" / "new"))
    assert "(`for (int it = 0; it < iters; it += 2) {`)" in divergence  # was &lt; in the span


def flat(doc: str) -> str:
    """A document's words one space apart: what it says, whatever its lines' width."""
    return " ".join(doc.split())


@pytest.mark.parametrize("folder", PROFILES, ids=lambda p: p.name)
def test_explain_markdown_is_clean(folder: Path) -> None:
    explanation = explain(folder)
    for kernel, diagnosis in explanation.kernels:
        doc = explain_markdown(diagnosis, kernel)
        assert not problems(doc), problems(doc)
        assert not repeated_rules(doc), repeated_rules(doc)


def rendered(data: dict) -> str:
    """The Markdown of a trace recorded as JSON (docs/traces)."""
    return render_markdown(Trace(RunRow(**data["run"]),
                                 tuple(RoundRecord.from_json(r) for r in data["rounds"])))


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_trace_markdown_is_clean(path: Path) -> None:
    doc = rendered(json.loads(path.read_text()))
    assert not problems(doc), problems(doc)
    assert not [b for b in repeated_rules(doc) if "citations" not in b]


# --- names in every Markdown output (issue 35) ---------------------------------------------------

HOSTILE = 'k"><img src=x onerror=alert(1)>|`x`'


def _only_in_code(doc: str) -> None:
    """Nothing of a hostile name opens a tag: outside code it is escaped (`\\<img`), inside an
    HTML line it is entities (problems() checks both)."""
    assert not problems(doc), problems(doc)


def test_explain_markdown_escapes_the_kernel_name() -> None:
    """Issue 35: `explain --format md` put kernel names in raw (`## \\`NAME\\``)."""
    kernel, diagnosis = explain(FIXTURES / "profiles" / "uncoalesced").kernels[0]
    doc = explain_markdown(diagnosis, replace(kernel, name=HOSTILE, display_name=HOSTILE))
    _only_in_code(doc)
    assert doc.startswith(f"## {md.code(HOSTILE)}\n")


def test_application_markdown_escapes_kernel_and_file_names() -> None:
    profile = read_csv_folder(FIXTURES / "apps" / "pipeline" / "base")
    renamed = tuple(replace(k, name=f"{HOSTILE}{k.name}", display_name=f"{HOSTILE}{k.name}",
                            mangled="") for k in profile.kernels)
    profile = replace(profile, kernels=renamed, report=f"<script>{HOSTILE}</script>/app")
    found = explain(profile)
    assert found.application is not None
    for doc in (app_overview_markdown(found.application, profile, show_all=True),
                groups_text(found.application, markdown=True)):
        _only_in_code(doc)


def test_trace_markdown_escapes_kernel_file_and_variant_names() -> None:
    """Issue 35: `<summary>source of k"><img src=x onerror=...>` in the trace's Markdown."""
    data = json.loads((ROOT / "docs" / "traces" / "fused_add_rmsnorm-template.h200.json")
                      .read_text())
    data["run"].update(kernel=HOSTILE, spec_path=f"/specs/{HOSTILE}.toml",
                       device=f"<b>{HOSTILE}</b>")
    for r in data["rounds"]:
        r["variant"].update(name=HOSTILE, filename=f"{HOSTILE}.cu")
    doc = rendered(data)
    _only_in_code(doc)
    assert '<summary>source of k"&gt;&lt;img src=x onerror=alert(1)&gt;|`x`.cu</summary>' in doc


# --- prose wrapped to 100 columns, tables and code whole (issue 35) -------------------------------


def long_prose(doc: str, width: int = md.PROSE_WIDTH) -> list[str]:
    """Prose lines longer than `width` (outside fenced code, tables, headings and HTML lines)
    that a break could have shortened: a line held long by one word or code span longer than
    half the width (a metric formula, a URL) is not one."""
    out, fenced = [], False
    for line in doc.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or len(line) <= width or line.lstrip().startswith(("|", "#", "<")):
            continue
        if any(len(part) > width // 2 for part in re.findall(r"`[^`]+`|\S+", line)):
            continue
        out.append(line)
    return out


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_trace_markdown_prose_is_wrapped(path: Path) -> None:
    """Issue 35: the trace's Markdown had lines of 1,033 characters."""
    doc = rendered(json.loads(path.read_text()))
    assert not long_prose(doc), long_prose(doc)
    assert max(len(line) for line in doc.splitlines()) > md.PROSE_WIDTH  # tables, code whole


def test_explain_and_triage_markdown_prose_is_wrapped() -> None:
    for kernel, diagnosis in explain(FIXTURES / "profiles" / "uncoalesced").kernels:
        assert not long_prose(explain_markdown(diagnosis, kernel))
    pipeline = triage(FIXTURES / "apps" / "pipeline" / "base",
                      FIXTURES / "apps" / "pipeline" / "new")
    for doc in (overview_markdown(pipeline, show_all=True), report_markdown(pipeline)):
        assert not long_prose(doc), long_prose(doc)


def test_wrapping_keeps_blocks_spans_and_list_items_whole() -> None:
    doc = "\n".join(["- item " + "word " * 30 + "- not a list", "> note: " + "q " * 60,
                     "```", "x " * 80, "```", "| a | " + "y " * 60 + "|",
                     "text `a span with spaces " + "s" * 20 + "` " + "t " * 40])
    wrapped = md.wrap(doc)
    lines = wrapped.splitlines()
    assert lines[0].startswith("- item") and lines[1].startswith("  ")  # under its text
    assert not any(line.lstrip().startswith("- not") for line in lines)  # no new list item
    assert any(line.startswith("> q") for line in lines)  # a quote goes on as a quote
    assert "x " * 80 in wrapped and "| a | " + "y " * 60 + "|" in wrapped  # code, table whole
    assert "`a span with spaces " + "s" * 20 + "`" in wrapped  # a span is never broken
    unquoted = [" ".join(re.sub(r"(?m)^> ?", "", d).split()) for d in (wrapped, doc)]
    assert unquoted[0] == unquoted[1]  # only line breaks (and a quote's markers) changed
