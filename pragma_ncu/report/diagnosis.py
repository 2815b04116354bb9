"""Rendering a Diagnosis as terminal text or Markdown (JSON is Diagnosis.to_json)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tabulate import tabulate

from pragma_ncu.diagnose.findings import Diagnosis, Evidence, Finding, LowerPrecision
from pragma_ncu.profile.profiles import KernelProfile
from pragma_ncu.report import markdown as md
from pragma_ncu.report import terminal

MAX_FINDINGS = 5
MAX_GUIDANCE = 5
MAX_LINES = 5


def _num(value: float | str | None, unit: str = "") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    shown = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{shown} {unit}".strip()


def roofline_line(diagnosis: Diagnosis) -> str:
    r = diagnosis.roofline
    parts = []
    if r.duration_ns:
        parts.append(f"{r.duration_ns / 1000:,.1f} µs")
    if r.achieved_gbps is not None:
        parts.append(f"DRAM {r.achieved_gbps:,.0f} GB/s = {_num(r.dram_peak_pct)}% of ncu's peak")
    if r.ceiling_fraction is not None and r.ceiling_source == "measured copy":
        parts.append(f"{r.ceiling_fraction:.0%} of the measured copy ceiling "
                     f"({r.ceiling_gbps:,.0f} GB/s)")
    if r.compute_pct is not None:
        parts.append(f"SM throughput {r.compute_pct:.0f}%")
    if r.binding:
        parts.append(f"busiest unit while SMs work: {r.binding} {_num(r.binding_pct)}%"
                     + (" (at the roofline)" if r.at_roofline else ""))
    if r.flop_rate:
        parts.append(f"{r.flop_rate / 1e12:.2f} TFLOP/s counted"
                     + (f" = {r.flop_rate / r.compute_ceiling:.0%} of the measured "
                        f"{r.compute_name} ceiling" if r.compute_ceiling else
                        " (no compute ceiling measured for this GPU: `pragma-ncu ceilings` "
                        "on it measures them)"))
    if r.attainable_fraction is not None:
        parts.append(f"{r.attainable_fraction:.0%} of the attainable roofline "
                     f"(set by {r.attainable_by})")
    elif r.roofline_fraction is not None and r.bound_by:
        parts.append(f"{r.roofline_fraction:.0%} of the attainable roofline "
                     f"(bound by {r.bound_by})")
    return "; ".join(parts) or "not known from this profile"


def lower_precision_line(diagnosis: Diagnosis) -> str:
    """'Lower precision: at a lower precision, if the results allow it ...' for an FP32
    GEMM-like kernel on SIMT pipes; "" for any other."""
    text = diagnosis.roofline.lower_precision_text()
    return f"Lower precision: {text}" if text else ""


def lower_precision_words(found: Sequence[LowerPrecision], each: str = "") -> str:
    """'lower precision, if allowed: TF32 >= 279 µs, BF16 >= 140 µs{each} (up to 19.2x,
    datasheet)'; "" when there is none: the rates are the datasheet's, never measured."""
    if not found:
        return ""
    figures = ", ".join(f"{p.unit.split()[0]} >= {p.time_ns / 1000:,.3g} µs" for p in found)
    return (f"lower precision, if allowed: {figures}{each} (up to "
            f"{max(p.speedup for p in found):.1f}x, datasheet)")


def verdict_text(diagnosis: Diagnosis) -> str:
    """'memory_bandwidth: <the top finding>', or why there is none: the kernel at its roofline
    with nothing else found, or a report without the speed-of-light figures to judge by."""
    if diagnosis.findings:
        return f"{diagnosis.classification}: {diagnosis.findings[0].title}"
    r = diagnosis.roofline
    if r.compute_pct is None and r.dram_peak_pct is None and r.attainable_fraction is None:
        return (f"{diagnosis.classification}: not judged, the report has no speed-of-light "
                "(unit utilization) figures to judge by")
    return f"{diagnosis.classification}: no bottleneck stands out"


MAX_GAPS = 6


def coverage_lines(diagnosis: Diagnosis) -> list[str]:
    """What this collection could not assess, and the ncu command that would."""
    if not diagnosis.not_assessed:
        return []
    gaps = [g for g in diagnosis.not_assessed if not g.inferred]
    inferred = [g for g in diagnosis.not_assessed if g.inferred]
    out = []
    if gaps:
        names = ", ".join(g.cause for g in gaps[:MAX_GAPS])
        more = f" and {len(gaps) - MAX_GAPS} more" if len(gaps) > MAX_GAPS else ""
        out.append(f"Not assessed (this collection lacks their metrics): {names}{more}.")
    if inferred:
        out.append("Only inferred from a proxy: " + ", ".join(g.cause for g in inferred) + ".")
    if diagnosis.collect_command:
        out.append(f"To assess them: {diagnosis.collect_command}")
        out.append("  (or `ncu --set full ...`; for your own kernel, "
                   "`pragma-ncu profile --kernel foo.cu` collects all of it)")
    return out


def _evidence_cell(e: Evidence, metric_width: int = 60) -> str:
    short = e.metric if len(e.metric) <= metric_width else e.metric[:metric_width - 3] + "..."
    return f"{short} = {_num(e.value, e.unit)}" + (f" ({e.note})" if e.note else "")


def findings_rows(diagnosis: Diagnosis, metric_width: int = 60) -> list[list[str]]:
    """The findings table's rows; each evidence line's metric name cut to `metric_width` (the
    value after it is what a narrow screen must still show)."""
    return [[str(i), f.bottleneck, f"{f.score:.2f}", f.title,
             "\n".join(_evidence_cell(e, metric_width) for e in f.evidence[:3])]
            for i, f in enumerate(diagnosis.findings[:MAX_FINDINGS], 1)]


def _ours(d: Diagnosis, rule: str) -> str:
    for i, f in enumerate(d.findings, 1):
        if rule in f.ncu_rules:
            return f"#{i} {f.bottleneck}"
    return "-"


def guidance_rows(diagnosis: Diagnosis) -> list[list[str]]:
    return [[g.section, g.rule, g.kind, _num(g.speedup) + ("%" if g.speedup is not None else ""),
             g.speedup_type, _ours(diagnosis, g.rule), (g.title or g.message)[:70]]
            for g in diagnosis.guidance[:MAX_GUIDANCE]]


def hotspot_rows(diagnosis: Diagnosis) -> list[list[str]]:
    rows = []
    for s in diagnosis.hotspots[:MAX_LINES]:
        stalls = ", ".join(f"{k} {v}" for k, v in list(s.stalls.items())[:2])
        rows.append([f"{Path(s.file).name}:{s.line}", str(s.samples), _num(s.instructions),
                     stalls, s.text[:50]])
    return rows


def _actions(f: Finding) -> list[str]:
    return [f"  - {a}" for a in f.actions]


def explain_text(diagnosis: Diagnosis, kernel: KernelProfile,
                 width: int = terminal.DEFAULT_WIDTH) -> str:
    """The diagnosis as terminal text: prose wrapped to `width`, tables fitted to it (their
    free-text columns wrapped inside the cells, pragma_ncu.report.terminal)."""
    width = terminal.clamp(width)
    out = [f"Kernel {kernel.display_name or kernel.name}",
           *terminal.wrap(f"Verdict: {verdict_text(diagnosis)}", width),
           *terminal.wrap(f"Roofline: {roofline_line(diagnosis)}", width)]
    if diagnosis.roofline.lower_precision:
        out += terminal.wrap(lower_precision_line(diagnosis), width)
    out.append("")
    gaps = coverage_lines(diagnosis)
    if gaps:
        out += [*terminal.wrap_all(gaps, width), ""]
    if diagnosis.findings:
        out += terminal.wrap("Findings, ranked by evidence (share = estimated share of time "
                             "at stake):", width, indent="")
        metric_width = max(24, min(60, width - 76))
        out.append(terminal.table(findings_rows(diagnosis, metric_width),
                              ["#", "cause", "share", "finding", "evidence"], width,
                              flexible={3: 16, 4: 40}))
        top = diagnosis.findings[0]
        out += ["", *terminal.wrap(f"Why: {top.summary}", width), "Next steps:",
                *terminal.wrap_all(_actions(top), width)]
    if diagnosis.guidance:
        out += ["", *terminal.wrap("ncu's own guidance, by its estimated speedup (our rank "
                                   "of that cause):", width, indent=""),
                terminal.table(guidance_rows(diagnosis), ["section", "rule", "type", "est.", "kind",
                                                      "ours", "title"], width, flexible={6: 16})]
    if diagnosis.hotspots:
        out += ["", f"Hottest source lines ({diagnosis.hotspot_counts}):",
                terminal.table(hotspot_rows(diagnosis), ["line", "samples", "inst", "top stalls",
                                                     "source"], width,
                           flexible={3: 16, 4: 16})]
    out += ["", "Metrics cited (compendium):"]
    out += terminal.wrap_all([f"  {c.metric}: {c.title}. {c.meaning.split('. ')[0].rstrip('.')}. "
                          f"[{c.source}]" for c in diagnosis.citations
                          if any(c.metric == e.metric for e in _top_evidence(diagnosis))],
                         width, indent="    ")
    return "\n".join(out)


def _top_evidence(d: Diagnosis) -> list[Evidence]:
    return [e for f in d.findings[:2] for e in f.evidence]


def explain_markdown(diagnosis: Diagnosis, kernel: KernelProfile) -> str:
    out = [f"## {md.code(kernel.display_name or kernel.name)}", "",
           f"**Verdict:** {md.text(verdict_text(diagnosis))}", "",
           f"**Roofline:** {md.text(roofline_line(diagnosis))}", ""]
    if diagnosis.roofline.lower_precision:
        out += [f"**Lower precision:** {md.text(diagnosis.roofline.lower_precision_text())}", ""]
    return md.wrap("\n".join(out + _markdown_sections(diagnosis))) + "\n"


def _markdown_sections(diagnosis: Diagnosis) -> list[str]:
    """Below the verdict: gaps, findings, ncu's guidance, hot lines, citations; text escaped
    as pragma_ncu.report.markdown says, source lines in code spans (a line break in a findings cell
    is an HTML <br>, the one tag a GitHub table cell takes for it)."""
    out: list[str] = []
    gaps = coverage_lines(diagnosis)
    if gaps:
        out += ["### Not assessed", "", *[f"- {md.text(line.strip())}" for line in gaps], ""]
    if diagnosis.findings:
        out += ["### Findings (ranked by evidence)", "",
                _table([[md.cell(c, "<br>") for c in r] for r in findings_rows(diagnosis)],
                       ["#", "cause", "share", "finding", "evidence"]), ""]
        for f in diagnosis.findings[:3]:
            out += [f"**{md.text(f.title)}.** {md.text(f.summary)}", "",
                    *[md.text(a.strip()) for a in _actions(f)], ""]
    if diagnosis.guidance:
        out += ["### ncu's guidance", "", _table(
            [[md.cell(c) for c in r] for r in guidance_rows(diagnosis)],
            ["section", "rule", "type", "est.", "kind", "ours", "title"]), ""]
    if diagnosis.hotspots:
        rows = [[*map(md.cell, r[:-1]), md.cell(md.code(r[-1])) if r[-1].strip() else ""]
                for r in hotspot_rows(diagnosis)]
        out += ["### Hot source lines", "", _table(
            rows, ["line", "samples", "inst", "top stalls", "source"]), ""]
    out += ["### Metrics cited", ""]
    out += [f"- {md.code(c.metric)}: {md.text(c.title)}. {md.text(c.meaning)} "
            f"([source]({c.source}))" for c in diagnosis.citations]
    return out


def _table(rows: list[list[str]], headers: list[str]) -> str:
    return tabulate(rows, headers, tablefmt="github")
