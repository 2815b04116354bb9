"""Rendering a TriageReport as terminal text (fits 100 columns) or Markdown; JSON is
TriageReport.to_json. Kernels that did not change get one paragraph; changed ones get the
causes, metric deltas, launch changes, ncu rules, source lines and what to check."""

from __future__ import annotations

import textwrap

from tabulate import tabulate

from pragma_ncu.triage.explain import number
from pragma_ncu.triage.model import (
    IMPROVEMENT,
    REGRESSION,
    UNCHANGED,
    KernelTriage,
    Side,
    TriageReport,
)

WIDTH = 100
METRIC_WIDTH = 40


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _side_line(role: str, side: Side) -> str:
    facts = [side.kind, side.device, f"ncu {side.profile.ncu_version}"
             if side.profile.ncu_version else ""]
    return f"{role:<4}  {side.label}  ({', '.join(f for f in facts if f)})"


def summary_line(r: TriageReport) -> str:
    counts = ", ".join(f"{r.count(v)} {v}" for v in (REGRESSION, IMPROVEMENT, UNCHANGED))
    head = "REGRESSION" if r.regressed else "no regression"
    return f"Verdict: {head} at {r.threshold_pct:g}% ({counts}); exit status {r.exit_code}"


def causes_rows(k: KernelTriage) -> list[list[str]]:
    return [[str(i), c.bottleneck, f"{c.score:.2f}", f"{c.rise:+.2f}",
             f"{c.share_base:.2f} -> {c.share_new:.2f}", f"{c.metric_support:.2f}",
             f"{c.rule_support:+.0f}"] for i, c in enumerate(k.causes, 1)]


CAUSE_HEADERS = ["#", "cause", "score", "rise", "share base -> new", "metrics", "rules"]


def metric_rows(k: KernelTriage, width: int = METRIC_WIDTH) -> list[list[str]]:
    unit = {True: "%", False: ""}
    return [[_cut(m.metric, width), number(m.base, unit[m.unit == "%"]),
             number(m.new, unit[m.unit == "%"]),
             f"{m.change_pct:+.0f}%" if m.change_pct is not None else "new",
             m.supports] for m in k.metrics]


METRIC_HEADERS = ["metric", "base", "new", "change", "supports"]


def config_rows(k: KernelTriage) -> list[list[str]]:
    return [[c.label, number(c.base, c.unit), number(c.new, c.unit)] for c in k.config]


def rule_items(k: KernelTriage, width: int = 96) -> list[str]:
    return [_cut(f"{'+' if r.change == 'appeared' else '-'} {r.section}/{r.rule} ({r.kind}"
                 + (f", est. {r.speedup:.0f}%" if r.speedup is not None else "") + "): "
                 + r.title, width) for r in k.rules]


def line_rows(k: KernelTriage) -> list[list[str]]:
    return [[_cut(s.location, 24), f"{s.base_share:.0%}", f"{s.new_share:.0%}", f"{s.shift:+.0%}",
             s.stall, _cut(s.text, 30)] for s in k.lines]


LINE_HEADERS = ["line", "base", "new", "shift", "top stall", "source"]


def _table(rows: list[list[str]], headers: list[str]) -> str:
    return textwrap.indent(tabulate(rows, headers, tablefmt="simple"), "  ")


def _heading(k: KernelTriage) -> str:
    d = k.duration
    return (f"{k.match.new.name}  [{k.match.how}]  {d.verdict.upper()} {d.delta_pct:+.1f}%  "
            f"({number(d.base_us)} -> {number(d.new_us)} µs, {d.basis})")


def kernel_text(k: KernelTriage) -> str:
    out = ["== " + _heading(k), textwrap.fill(k.diagnosis, WIDTH)]
    if k.duration.verdict == UNCHANGED:
        return "\n".join(out + _missing(k))
    if k.causes:
        out += ["", "Causes, ranked by how much of the change they explain (rise = change of "
                "the time a cause", "accounts for, as a share of the longer duration):",
                _table(causes_rows(k), CAUSE_HEADERS)]
    if k.metrics:
        out += ["", "Metric changes, ranked by relevance to those causes (compendium):",
                _table(metric_rows(k), METRIC_HEADERS)]
    if k.config:
        out += ["", "Launch, build and clock changes:", _table(config_rows(k), ["", "base", "new"])]
    if k.rules:
        out += ["", "ncu rules that appeared (+) or vanished (-):",
                *(f"  {item}" for item in rule_items(k))]
    if k.lines:
        out += ["", "Source lines whose share of stall samples moved most:",
                _table(line_rows(k), LINE_HEADERS)]
    if k.checks:
        out += ["", "What to check:", *(textwrap.fill(c, WIDTH, initial_indent="  - ",
                                                      subsequent_indent="    ")
                                        for c in k.checks)]
    return "\n".join(out + _missing(k))


def _missing(k: KernelTriage) -> list[str]:
    return [textwrap.fill(f"not compared: {m}", WIDTH, initial_indent="  ",
                          subsequent_indent="    ") for m in k.missing]


def report_text(r: TriageReport) -> str:
    out = [_side_line("BASE", r.base), _side_line("NEW", r.new), summary_line(r)]
    out += [textwrap.fill(f"note: {n}", WIDTH, subsequent_indent="  ") for n in r.notes]
    for k in r.kernels:
        out += ["", kernel_text(k)]
    out += _unmatched(r, "  ")
    return "\n".join(out)


def _unmatched(r: TriageReport, indent: str) -> list[str]:
    out = []
    for role, names in (("BASE", r.unmatched_base), ("NEW", r.unmatched_new)):
        if names:
            out += ["", f"Unmatched on {role}:", *(f"{indent}{n}" for n in names)]
    return out


def report_markdown(r: TriageReport) -> str:
    out = ["# pragma-ncu triage", "", f"- **BASE** `{r.base.label}` ({r.base.kind}, "
           f"{r.base.device or 'device unknown'})", f"- **NEW** `{r.new.label}` "
           f"({r.new.kind}, {r.new.device or 'device unknown'})", "", f"**{summary_line(r)}**",
           ""]
    out += [f"> note: {n}" for n in r.notes]
    for k in r.kernels:
        out += ["", f"## {_heading(k)}", "", k.diagnosis, ""]
        if k.causes and k.duration.verdict != UNCHANGED:
            out += [tabulate(causes_rows(k), CAUSE_HEADERS, tablefmt="github"), ""]
        if k.metrics and k.duration.verdict != UNCHANGED:
            out += [tabulate(metric_rows(k, 90), METRIC_HEADERS, tablefmt="github"), ""]
        if k.config:
            out += [tabulate(config_rows(k), ["change", "base", "new"], tablefmt="github"), ""]
        out += [f"- {item}" for item in rule_items(k)]
        if k.lines:
            out += ["", tabulate(line_rows(k), LINE_HEADERS, tablefmt="github"), ""]
        out += [f"- [ ] {c}" for c in k.checks] + [f"- not compared: {m}" for m in k.missing]
    out += _unmatched(r, "- ")
    return "\n".join(out) + "\n"
