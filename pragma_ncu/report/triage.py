"""The full detail of kernel groups (`--kernel NAME`), as terminal text (fits 100 columns) or
Markdown: for each group its launches on both sides, then what today's per-kernel triage says
of its representative launches. Groups that did not change get one paragraph; changed ones get
the causes, metric deltas, launch changes, ncu rules, source lines and what to check. The
one-screen overview is pragma_ncu.report.triage_overview; JSON is TriageReport.to_json."""

from __future__ import annotations

import textwrap

from tabulate import tabulate

from pragma_ncu.report import markdown as md
from pragma_ncu.report import terminal
from pragma_ncu.report.triage_overview import headline, side_line
from pragma_ncu.triage.causes import number
from pragma_ncu.triage.report import UNCHANGED, GroupTriage, KernelTriage, TriageReport

METRIC_WIDTH = 40


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def causes_rows(kernel: KernelTriage) -> list[list[str]]:
    return [[str(i), c.bottleneck, f"{c.score:.2f}", f"{c.rise:+.2f}",
             f"{c.share_base:.2f} -> {c.share_new:.2f}", f"{c.metric_support:.2f}",
             f"{c.rule_support:+.0f}"] for i, c in enumerate(kernel.causes, 1)]


CAUSE_HEADERS = ["#", "cause", "score", "rise", "share base -> new", "metrics", "rules"]


def metric_rows(kernel: KernelTriage, width: int = METRIC_WIDTH) -> list[list[str]]:
    unit = {True: "%", False: ""}
    return [[_cut(m.metric, width), number(m.base, unit[m.unit == "%"]),
             number(m.new, unit[m.unit == "%"]),
             f"{m.change_pct:+.0f}%" if m.change_pct is not None else "new",
             m.supports] for m in kernel.metrics]


METRIC_HEADERS = ["metric", "base", "new", "change", "supports"]


def config_rows(kernel: KernelTriage) -> list[list[str]]:
    return [[c.label, number(c.base, c.unit), number(c.new, c.unit)] for c in kernel.config]


def rule_items(kernel: KernelTriage, width: int = 96) -> list[str]:
    """One line per rule result that appeared (+) or vanished (-); results whose lines read
    the same once cut are one line."""
    return list(dict.fromkeys(
        _cut(f"{'+' if r.change == 'appeared' else '-'} {r.section}/{r.rule} ({r.kind}"
             + (f", est. {r.speedup:.0f}%" if r.speedup is not None else "") + "): "
             + r.title, width) for r in kernel.rules))


def line_rows(kernel: KernelTriage) -> list[list[str]]:
    return [[_cut(s.location, 24), f"{s.base_share:.0%}", f"{s.new_share:.0%}", f"{s.shift:+.0%}",
             s.stall, _cut(s.text, 30)] for s in kernel.lines]


LINE_HEADERS = ["line", "base", "new", "shift", "top stall", "source"]


def _table(rows: list[list[str]], headers: list[str]) -> str:
    return textwrap.indent(tabulate(rows, headers, tablefmt="simple"), "  ")


def _heading(k: KernelTriage) -> str:
    d = k.duration
    return (f"{k.match.new.name}  [{k.match.how}]  {d.verdict.upper()} {d.delta_pct:+.1f}%  "
            f"({number(d.base_us)} -> {number(d.new_us)} µs, {d.basis})")


def kernel_text(kernel: KernelTriage, width: int = terminal.DEFAULT_WIDTH) -> str:
    out = [*terminal.wrap(_heading(kernel), width, indent="   ", first="== "),
           *terminal.wrap(kernel.diagnosis, width, indent="")]
    if kernel.duration.verdict == UNCHANGED:
        return "\n".join(out + _missing(kernel, width))
    if kernel.causes:
        out += ["", *terminal.wrap("Causes, ranked by how much of the change they explain "
                                   "(rise = change of the time a cause accounts for, as a "
                                   "share of the longer duration):", width, indent=""),
                _table(causes_rows(kernel), CAUSE_HEADERS)]
    if kernel.metrics:
        out += ["", "Metric changes, ranked by relevance to those causes (compendium):",
                _table(metric_rows(kernel), METRIC_HEADERS)]
    if kernel.config:
        out += ["", "Launch, build and clock changes:",
                _table(config_rows(kernel), ["", "base", "new"])]
    if kernel.rules:
        out += ["", "ncu rules that appeared (+) or vanished (-):",
                *(f"  {item}" for item in rule_items(kernel, width - 2))]
    if kernel.lines:
        out += ["", "Source lines whose share of stall samples moved most:",
                _table(line_rows(kernel), LINE_HEADERS)]
    if kernel.checks:
        out += ["", "What to check:", *terminal.wrap_all([f"  - {c}" for c in kernel.checks],
                                                         width)]
    return "\n".join(out + _missing(kernel, width))


def _missing(k: KernelTriage, width: int) -> list[str]:
    return terminal.wrap_all([f"  not compared: {m}" for m in k.missing], width)


def group_lines(triaged: GroupTriage, width: int = terminal.DEFAULT_WIDTH) -> list[str]:
    """The group's launches on each side: how many, their time and median, the launch."""
    return terminal.wrap_all(_group_facts(triaged), width)


def _group_facts(triaged: GroupTriage) -> list[str]:
    out = []
    for role, group in (("BASE", triaged.match.base), ("NEW", triaged.match.new)):
        out.append(f"  {role:<4} {group.name}: {group.count} launches, {number(group.total_us)} "
                   f"µs in all, median {number(group.median_us)} µs; {group.config.label()}")
    out.append(f"  paired as: {triaged.match.how}; {triaged.duration.note}")
    return out


def report_text(report: TriageReport, width: int = terminal.DEFAULT_WIDTH) -> str:
    """Full detail of every group that was explained (what `--kernel NAME` shows), `width`
    columns wide."""
    width = terminal.clamp(width)
    out = [side_line("BASE", report.base), side_line("NEW", report.new),
           *terminal.wrap_all(headline(report)[1:], width)]
    out += terminal.wrap_all([f"note: {n}" for n in report.notes], width)
    for g in report.kernels:
        if g.detail is not None:
            out += ["", kernel_text(g.detail, width), *group_lines(g, width)]
    return "\n".join(out)


def report_markdown(report: TriageReport) -> str:
    """The same detail in Markdown (kernel names and text escaped as pragma_ncu.report.markdown
    says: no entities, nothing a renderer would take for HTML)."""
    out = ["# pragma-ncu triage", ""]
    for role, side in (("BASE", report.base), ("NEW", report.new)):
        out.append(f"- **{role}** {md.code(side.label)} ({side.kind}, "
                   f"{md.text(side.device or 'device unknown')})")
    out += ["", f"**{headline(report)[1]}**", ""]
    out += [f"> note: {md.text(n)}" for n in report.notes]
    for g in report.kernels:
        if g.detail is None:
            continue
        k = g.detail
        out += ["", f"## {md.text(_heading(k))}", "", md.text(k.diagnosis), "",
                *(f"- {md.text(line.strip())}" for line in _group_facts(g)), ""]
        if k.causes and k.duration.verdict != UNCHANGED:
            out += [_md_table(causes_rows(k), CAUSE_HEADERS), ""]
        if k.metrics and k.duration.verdict != UNCHANGED:
            out += [_md_table(metric_rows(k, 90), METRIC_HEADERS), ""]
        if k.config:
            out += [_md_table(config_rows(k), ["change", "base", "new"]), ""]
        out += [f"- {md.text(item)}" for item in rule_items(k)]
        if k.lines:
            out += ["", _md_table(line_rows(k), LINE_HEADERS), ""]
        out += [f"- [ ] {md.text(c)}" for c in k.checks]
        out += [f"- not compared: {md.text(m)}" for m in k.missing]
    return md.wrap("\n".join(out)) + "\n"


def _md_table(rows: list[list[str]], headers: list[str]) -> str:
    return tabulate([[md.cell(c) for c in row] for row in rows], [md.cell(h) for h in headers],
                    tablefmt="github")
