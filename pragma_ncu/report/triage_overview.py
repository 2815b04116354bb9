"""The application on one screen: a headline (total device time on each side, the verdict, the exit
status), one row per changed kernel group (its time change with the confidence interval, the
device time it added or saved, its top cause and the evidence in a few words), those too noisy
to decide, the unchanged groups as a count, kernels added or removed, groups paired across
builds, and the notes that apply to every kernel, said once. Text (100 columns) and Markdown (a
pull-request comment); `--kernel NAME` shows a group's full detail instead
(pragma_ncu.report.triage)."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from pragma_ncu.report import markdown as md
from pragma_ncu.report import terminal
from pragma_ncu.triage.groups import KernelGroup
from pragma_ncu.triage.match import SAME
from pragma_ncu.triage.report import (
    IMPROVEMENT,
    REGRESSION,
    UNCHANGED,
    UNDECIDED,
    GroupTriage,
    Side,
    TriageReport,
)

DEFAULT_TOP = 10
NAME_MIN = 16
MAX_LISTED = 6  # added, removed or re-paired groups named before "and N more"
COMMAND = ": $ "  # in a note, what follows is a command line


def duration_text(us: float) -> str:
    """A time in the unit that reads best: 752 µs, 1.52 ms, 3.04 s."""
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3g} s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} µs"


def signed_duration(us: float) -> str:
    return ("+" if us >= 0 else "-") + duration_text(abs(us))


def side_line(role: str, side: Side) -> str:
    facts = [side.kind, side.device, f"ncu {side.profile.ncu_version}"
             if side.profile.ncu_version else ""]
    return f"{role:<4}  {side.label}  ({', '.join(f for f in facts if f)})"


def headline(report: TriageReport) -> list[str]:
    """Total device time on each side, then the verdict and the exit status."""
    tb, tn = report.base_total_us, report.new_total_us
    nb, nn = report.launch_counts
    groups = (len(report.kernels) + len(report.removed), len(report.kernels) + len(report.added))
    change = f"{pct(100 * (tn - tb) / tb)}, " if tb else ""
    counts = ", ".join(f"{n} {label}" for n, label in (
        (report.count(REGRESSION), "regressed"), (report.count(IMPROVEMENT), "improved"),
        (report.count(UNDECIDED), "too noisy to decide"), (report.count(UNCHANGED), "unchanged"),
        (len(report.added), "added"), (len(report.removed), "removed")) if n)
    verdict = "REGRESSION" if report.regressed else \
        "no regression shown, too noisy to decide" if report.count(UNDECIDED) else "no regression"
    if report.one_side_regressed:
        counts += (f"; kernels on one side only {signed_duration(report.one_side_net_us)} net, "
                   f"{pct(100 * report.one_side_net_us / tb)} of BASE")
    return [f"{report.device_word} time {duration_text(tb)} -> {duration_text(tn)} ({change}"
            f"{signed_duration(tn - tb)}): {nb} -> {nn} launches of {groups[0]} -> {groups[1]} "
            "kernels",
            f"Verdict: {verdict} at {report.threshold_pct:g}% ({counts}); exit status "
            f"{report.exit_code}"]


def pct(value: float) -> str:
    """+3.2%, +248%, +11,159%: as many digits as a change of that size needs."""
    return f"{value:+.1f}%" if abs(value) < 100 else f"{value:+,.0f}%"


def interval_text(group: GroupTriage) -> str:
    """The change's 95% confidence interval, the timing noise, or why there is neither."""
    d = group.duration
    if d.ci_low_pct is not None and d.ci_high_pct is not None:
        return f"{pct(d.ci_low_pct)[:-1]}..{pct(d.ci_high_pct)}"
    if d.basis == "timing" and d.noise_pct is not None:
        return f"noise ±{d.noise_pct:.1f}%"
    return "none"


def change_text(group: GroupTriage) -> str:
    """'+248% (95% CI +242..+250%)'."""
    interval = interval_text(group)
    return f"{pct(group.duration.delta_pct)} ({'95% CI ' if '..' in interval else ''}{interval})"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def row_cells(index: int, group: GroupTriage, report: TriageReport) -> list[str]:
    b, n = group.match.base, group.match.new
    share = f"{100 * group.delta_us / report.base_total_us:+.1f}%" if report.base_total_us else ""
    return [str(index), group.name, f"{b.count}/{n.count}",
            f"{b.median_us:.4g} -> {n.median_us:.4g}", pct(group.duration.delta_pct),
            interval_text(group), signed_duration(group.delta_us), share]


def row_headers(report: TriageReport) -> list[str]:
    return ["#", "kernel", "launches", "median µs", "change", "95% CI",
            f"{report.device_word} time", "of BASE"]


def cause_text(group: GroupTriage) -> str:
    top = group.top_cause
    if group.detail is None:
        return ""
    if top is None and group.detail.unassessed and group.verdict in (REGRESSION, IMPROVEMENT):
        return "not explained: the reports lack the metrics to look (see the note)"
    if top is None:
        return "no detector explains it" if group.verdict == REGRESSION else \
            "cause: " + (group.evidence or "no finding moved")
    label = "relief" if group.verdict == IMPROVEMENT else "cause"
    return f"{label}: {top.bottleneck}" + (f" ({group.evidence})" if group.evidence else "")


def shown_groups(report: TriageReport, top: int, show_all: bool) -> list[GroupTriage]:
    """The rows: every group with --all, else the first `top` changed ones."""
    if show_all:
        return list(report.kernels)
    return [g for g in report.kernels if g.verdict != UNCHANGED][:top]


def rows_text(groups: Sequence[GroupTriage], report: TriageReport, start: int = 1,
              width: int = terminal.DEFAULT_WIDTH) -> list[str]:
    """The table, each row followed by its cause and evidence on an indented line; kernel
    names are cut so that rows fit `width` (down to NAME_MIN characters)."""
    if not groups:
        return []
    rows = [row_cells(i, g, report) for i, g in enumerate(groups, start)]
    headers = row_headers(report)
    others = sum(max(len(row[c]) for row in [headers, *rows]) + 2
                 for c in range(len(headers)) if c != 1)
    room = max(NAME_MIN, width - 2 - others - 2)
    for row in rows:
        row[1] = _cut(row[1], room)
    table = tabulate(rows, headers, tablefmt="simple", disable_numparse=True).splitlines()
    out = ["  " + line for line in table[:2]]
    for line, g in zip(table[2:], groups, strict=True):
        out.append(f"  {line}".rstrip())
        cause = cause_text(g)
        if cause:
            out.append(_cut(f"       {cause}", width))
    return out


def sections_text(shown: Sequence[GroupTriage], report: TriageReport,
                  width: int = terminal.DEFAULT_WIDTH) -> list[str]:
    """The rows under a heading per verdict: regressions, improvements, those too noisy to
    decide, unchanged (--all)."""
    out: list[str] = []
    number = 1
    device = report.device_word
    for verdict, heading in ((REGRESSION, f"Regressions, most {device} time lost first:"),
                             (IMPROVEMENT, f"Improvements, most {device} time saved first:"),
                             (UNDECIDED, "Too noisy to decide (the noise swamps the "
                                         "difference; more runs or a quieter host decide):"),
                             (UNCHANGED, "Unchanged:")):
        groups = [g for g in shown if g.verdict == verdict]
        if groups:
            out += ["", heading, *rows_text(groups, report, number, width)]
            number += len(groups)
    return out


def collapsed_line(report: TriageReport, shown: Sequence[GroupTriage]) -> list[str]:
    """The groups not shown as rows, as counts, and how to see them."""
    seen = {id(g) for g in shown}
    hidden_changed = [g for g in report.kernels if g.verdict != UNCHANGED and id(g) not in seen]
    unchanged = [g for g in report.kernels if g.verdict == UNCHANGED and id(g) not in seen]
    out = []
    if hidden_changed:
        what = "changed or too noisy to decide" if any(g.verdict == UNDECIDED for g in
                                                        hidden_changed) else "changed"
        out.append(f"{len(hidden_changed)} more kernel groups {what}: --top N or --all")
    if unchanged:
        total = sum(g.match.base.total_us for g in unchanged)
        out.append(f"{len(unchanged)} kernel groups unchanged (within the noise or the "
                   f"{report.threshold_pct:g}% threshold; {duration_text(total)} of BASE): --all "
                   "lists them")
    return out


def kernel_label(name: str, width: int = 72) -> str:
    """A long kernel name cut inside its template arguments, which carry the length (PyTorch's
    run to a thousand characters): 'at::native::vectorized_elementwise_kernel<8, at::...>'."""
    if len(name) <= width:
        return name
    head, bracket, _ = name.partition("<")
    if not bracket or len(head) >= width - 5:
        return _cut(name, width)
    return name[: width - 4] + "...>"


def group_list(groups: Sequence[KernelGroup], causes: dict[str, str] | None = None) -> str:
    """Most time first, long names cut (--format json keeps them whole), each with its own
    top cause where it was diagnosed."""
    groups = sorted(groups, key=lambda g: -g.total_us)
    causes = causes or {}
    names = [f"{kernel_label(g.name)} ({g.count}x, {duration_text(g.total_us)}"
             + (f"; {causes[g.signature]}" if causes.get(g.signature, "none") != "none" else "")
             + ")" for g in groups[:MAX_LISTED]]
    more = f", and {len(groups) - MAX_LISTED} more" if len(groups) > MAX_LISTED else ""
    return ", ".join(names) + more


def membership_lines(report: TriageReport) -> list[str]:
    """Kernels on one side only, and groups paired other than as the same kernel."""
    out = []
    for groups, total, label in ((report.removed, report.removed_us, "Only on BASE (removed"),
                                 (report.added, report.added_us, "Only on NEW (added")):
        if groups:
            out.append(f"{label}, {duration_text(total)}): "
                       f"{group_list(groups, report.one_side_causes)}")
    repaired = [g for g in report.kernels if g.match.how != SAME]
    if repaired:
        items = [_pairing(g) for g in repaired[:MAX_LISTED]]
        more = f"; and {len(repaired) - MAX_LISTED} more" if len(repaired) > MAX_LISTED else ""
        out.append("Paired across builds: " + "; ".join(items) + more)
    return out


def _pairing(g: GroupTriage) -> str:
    b, n = g.match.base, g.match.new
    names = b.name if b.name == n.name else f"{b.name} -> {n.name}"
    launch = f", {b.config.label()} -> {n.config.label()}" if b.config != n.config else ""
    return f"{names} ({g.match.how}{launch})"


def overview_text(report: TriageReport, top: int = DEFAULT_TOP, show_all: bool = False,
                  width: int = terminal.DEFAULT_WIDTH) -> str:
    """The one-screen text view, `width` columns wide (pragma_ncu.report.terminal: prose wrapped
    at spaces only, so a command line in a note survives copy and paste)."""
    width = terminal.clamp(width)
    shown = shown_groups(report, top, show_all)
    out = [side_line("BASE", report.base), side_line("NEW", report.new),
           *terminal.wrap_all(headline(report), width)]
    out += sections_text(shown, report, width)
    collapsed = collapsed_line(report, shown)
    membership = membership_lines(report)
    if collapsed or membership:
        out += ["", *terminal.wrap_all(collapsed + membership, width)]
    if report.notes:
        out += [""]
        for n in report.notes:  # a command after ": $ " stays on one line, whole, for copying
            text, _, command = n.partition(COMMAND)
            out += terminal.wrap(f"note: {text}" + (":" if command else ""), width)
            out += [f"  $ {command}"] if command else []
    if any(g.detail is not None for g in shown):
        out += ["", "Full detail of one kernel group: --kernel NAME"]
    return "\n".join(out)


def overview_markdown(report: TriageReport, top: int = DEFAULT_TOP, show_all: bool = False) -> str:
    """The same for a pull-request comment: a table, and each changed group's diagnosis in a
    collapsed block. Kernel names go in code spans; other text is escaped only where Markdown
    would read HTML in it (pragma_ncu.report.markdown), entities only inside the HTML of
    <summary>."""
    shown = shown_groups(report, top, show_all)
    head = headline(report)
    out = ["## pragma-ncu triage", "", f"**{head[1]}**", "", head[0], ""]
    for role, side in (("BASE", report.base), ("NEW", report.new)):
        out.append(f"- {role} {md.code(side.label)} ({side.kind}, "
                   f"{md.text(side.device or 'device unknown')})")
    out.append("")
    if shown:
        rows = [[*row_cells(i, g, report), g.verdict, cause_text(g)]
                for i, g in enumerate(shown, 1)]
        cells = [[md.cell(md.code(c)) if col == 1 else md.cell(c) for col, c in enumerate(row)]
                 for row in rows]
        out += [tabulate(cells, [*row_headers(report), "verdict", "cause (evidence)"],
                         tablefmt="github", disable_numparse=True), ""]
    out += [f"- {md.text(line)}"
            for line in collapsed_line(report, shown) + membership_lines(report)]
    for n in report.notes:
        text, _, command = n.partition(COMMAND)
        out += [f"> note: {md.text(text)}" + (f":\n>\n> {md.code(command)}" if command else "")]
    for g in shown:
        if g.detail is not None and g.verdict != UNCHANGED:
            out += ["", f"<details><summary>{md.html_text(g.name)}: {g.verdict}, "
                    f"{md.html_text(change_text(g))}</summary>", "",
                    md.text(g.detail.diagnosis), *(["", *(f"- [ ] {md.text(c)}"
                                                          for c in g.detail.checks)]
                                                   if g.detail.checks else []),
                    "", "</details>"]
    return md.wrap("\n".join(out)) + "\n"
