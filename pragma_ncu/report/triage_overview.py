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
from pragma_ncu.report.diagnosis import lower_precision_words
from pragma_ncu.triage.groups import KernelGroup
from pragma_ncu.triage.match import SAME
from pragma_ncu.triage.report import (
    ADDED,
    IMPROVEMENT,
    REGRESSION,
    REMOVED,
    SWAPPED,
    UNCHANGED,
    UNDECIDED,
    Change,
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
        (report.count(REGRESSION, False), "regressed"),
        (report.count(IMPROVEMENT, False), "improved"),
        (len(report.swaps), "swapped" + _swap_verdicts(report)),
        (report.count(UNDECIDED, False), "too noisy to decide"),
        (report.count(UNCHANGED, False), "unchanged"),
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


def _swap_verdicts(report: TriageReport) -> str:
    """' (1 slower)': the swaps that regressed or improved."""
    words = [f"{n} {word}" for verdict, word in ((REGRESSION, "slower"), (IMPROVEMENT, "faster"))
             if (n := sum(1 for g in report.swaps if g.verdict == verdict))]
    return f" ({', '.join(words)})" if words else ""


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


KIND_WORDS = {REGRESSION: "regression", IMPROVEMENT: "improvement", SWAPPED: "swap", ADDED: "added",
              REMOVED: "removed", UNDECIDED: "too noisy to decide", UNCHANGED: "unchanged"}
CAUSE_LINES = 4  # the most lines under a row


def as_change(group: GroupTriage) -> Change:
    """A paired group as a row (one that moved nothing, for the rows below the ranking)."""
    kind = SWAPPED if group.match.swapped else group.verdict
    return Change(kind, group.delta_us, paired=group)


def row_cells(index: int, change: Change, report: TriageReport, room: int = 0) -> list[str]:
    """A row's cells (row_headers): what changed is in its numbers ("new", "gone") and in the
    line under it (a swap's)."""
    share = f"{100 * change.delta_us / report.base_total_us:+.1f}%" if report.base_total_us \
        else ""
    head = [str(index)]
    tail = [signed_duration(change.delta_us), share]
    g = change.paired
    if g is None:
        one = change.one_side
        assert one is not None
        counts = f"-/{one.count}" if change.kind == ADDED else f"{one.count}/-"
        medians = f"- -> {one.median_us:.4g}" if change.kind == ADDED else \
            f"{one.median_us:.4g} -> -"
        name = fitted_name(one.name, room) if room else one.name
        return [*head, name, counts, medians, "new" if change.kind == ADDED else "gone", "",
                *tail]
    m, d = g.match, g.duration
    more = f" +{len(m.new_also)}" if m.swapped and m.new_also else ""
    name = fitted_name(g.name, room - len(more)) + more if room else g.name + more
    return [*head, name, f"{m.base_count}/{m.new_count}", f"{d.base_us:.4g} -> {d.new_us:.4g}",
            pct(d.delta_pct), interval_text(g), *tail]


def fitted_name(name: str, room: int) -> str:
    """A kernel name in `room` characters: whole if it fits, else without its leading
    namespaces (`at::<unnamed>::`), then cut."""
    if len(name) <= room:
        return name
    return _cut(terminal.short_name(name), max(room, 4))


def row_headers(report: TriageReport) -> list[str]:
    return ["#", "kernel", "launches", "median µs", "change", "95% CI",
            f"{report.device_word} time", "of BASE"]


def cause_text(change: Change, report: TriageReport) -> str:
    """The line under a row: a swap's kernels and their bottlenecks, a one-side group's own
    bottleneck, a changed group's top cause with its evidence."""
    if change.paired is None:
        assert change.one_side is not None
        cause = report.one_side_causes.get(change.one_side.signature, "none")
        words = [f"its bottleneck: {cause}" if cause != "none" else "",
                 lower_precision_words(report.lower_precision.get(change.one_side.signature,
                                                                  ()), " a launch")]
        return "; ".join(w for w in words if w)
    group = change.paired
    text = swap_text(group, report) if group.match.swapped else _verdict_cause(group)
    lower = lower_precision_words(group.detail.lower_new, " a launch") if group.detail else ""
    return "; ".join(w for w in (text, f"NEW at {lower}" if lower else "") if w)


SWAP_NAME = 48  # the characters of BASE's kernel name under a swap's row


def swap_text(group: GroupTriage, report: TriageReport) -> str:
    """'swap, another kernel for the same call, slower per call: was NAME +1 (compute_fma ->
    compute_fma); cause: ...' (the row names NEW's kernel; its times are per call)."""
    m, detail = group.match, group.detail
    word = {REGRESSION: "slower", IMPROVEMENT: "faster", UNDECIDED: "too noisy to decide",
            UNCHANGED: "same time"}[group.verdict]
    was = kernel_label(terminal.short_name(m.base.name), SWAP_NAME) + (
        f" +{len(m.base_also)}" if m.base_also else "")
    classes = f" ({detail.class_base} -> {detail.class_new})" if detail else ""
    cause = _verdict_cause(group) if group.verdict in (REGRESSION, IMPROVEMENT) else ""
    return (f"swap, another kernel for the same call, {word} per call: was {was}{classes}"
            + (f"; {cause}" if cause else ""))


def _verdict_cause(group: GroupTriage) -> str:
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


def shown_changes(report: TriageReport, top: int, show_all: bool) -> list[Change]:
    """The ranking's rows: all with --all, else the first `top`."""
    ranked = list(report.changes())
    return ranked if show_all else ranked[:top]


def quiet_groups(report: TriageReport, top: int, show_all: bool) -> list[GroupTriage]:
    """The paired groups outside the ranking shown as rows: those too noisy to decide (the
    first `top`), and with --all the unchanged too."""
    quiet = [g for g in report.kernels if not g.match.swapped and
             g.verdict not in (REGRESSION, IMPROVEMENT)]
    if show_all:
        return quiet
    return [g for g in quiet if g.verdict == UNDECIDED][:top]


def rows_text(changes: Sequence[Change], report: TriageReport, start: int = 1,
              width: int = terminal.DEFAULT_WIDTH) -> list[str]:
    """The table, each row followed by its cause and evidence on an indented line; kernel
    names are cut so that rows fit `width` (down to NAME_MIN characters)."""
    if not changes:
        return []
    table = _table(changes, report, start, width, keep=len(row_headers(report)))
    if max(map(len, table)) + 2 > width:  # the share of BASE goes first (the GPU time stays)
        table = _table(changes, report, start, width, keep=len(row_headers(report)) - 1)
    out = ["  " + line for line in table[:2]]
    for line, c in zip(table[2:], changes, strict=True):
        out.append(f"  {line}".rstrip())
        cause = cause_text(c, report)
        if cause:
            out += terminal.wrap(f"       {cause}", width, indent="         ")[:CAUSE_LINES]
    return out


def _table(changes: Sequence[Change], report: TriageReport, start: int, width: int,
           keep: int) -> list[str]:
    """The rows as tabulate lays them out, the first `keep` columns, kernel names cut to the
    room the other columns leave (NAME_MIN at least): measured, not estimated, since a
    column is as wide as its header plus two where the header is its widest cell."""
    headers = row_headers(report)[:keep]
    room = width
    for _ in range(3):
        rows = [row_cells(i, c, report, room)[:keep] for i, c in enumerate(changes, start)]
        for row in rows:
            row[1] = _cut(row[1], room)  # a one-side group's name, or a swap's with its "+N"
        table = tabulate(rows, headers, tablefmt="simple", disable_numparse=True).splitlines()
        excess = max(map(len, table)) + 2 - width
        if excess <= 0 or room <= NAME_MIN:
            break
        room = max(NAME_MIN, min(room, max(len(r[1]) for r in rows)) - excess)
    return table


def sections_text(changes: Sequence[Change], quiet: Sequence[GroupTriage], report: TriageReport,
                  width: int = terminal.DEFAULT_WIDTH) -> list[str]:
    """The ranking of what moved the total, then those too noisy to decide, then (--all) the
    unchanged."""
    device = report.device_word
    out: list[str] = []
    if changes:
        out += ["", f"What moved the {device} time, most first (changed, swapped, added, "
                "removed):", *rows_text(changes, report, 1, width)]
    number = len(changes) + 1
    for verdict, heading in ((UNDECIDED, "Too noisy to decide (the noise swamps the "
                                         "difference; more runs or a quieter host decide):"),
                             (UNCHANGED, "Unchanged:")):
        groups = [as_change(g) for g in quiet if g.verdict == verdict]
        if groups:
            out += ["", heading, *rows_text(groups, report, number, width)]
            number += len(groups)
    return out


def collapsed_line(report: TriageReport, changes: Sequence[Change],
                   quiet: Sequence[GroupTriage]) -> list[str]:
    """What is not shown as rows, as counts, and how to see it."""
    out = []
    hidden = len(report.changes()) - len(changes)
    if hidden:
        out.append(f"{hidden} more changes, smaller: --top N or --all")
    seen = {id(g) for g in quiet}
    noisy = [g for g in report.kernels if g.verdict == UNDECIDED and not g.match.swapped
             and id(g) not in seen]
    if noisy:
        out.append(f"{len(noisy)} more kernel groups too noisy to decide: --top N or --all")
    unchanged = [g for g in report.kernels if g.verdict == UNCHANGED and not g.match.swapped
                 and id(g) not in seen]
    if unchanged:
        total = sum(g.match.base_total_us for g in unchanged)
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
    repaired = [g for g in report.kernels if g.match.how != SAME and not g.match.swapped]
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
    changes, quiet = shown_changes(report, top, show_all), quiet_groups(report, top, show_all)
    out = [side_line("BASE", report.base), side_line("NEW", report.new),
           *terminal.wrap_all(headline(report), width)]
    out += sections_text(changes, quiet, report, width)
    collapsed = collapsed_line(report, changes, quiet)
    membership = membership_lines(report)
    if collapsed or membership:
        out += ["", *terminal.wrap_all(collapsed + membership, width)]
    if report.notes:
        out += [""]
        for n in report.notes:  # a command after ": $ " stays on one line, whole, for copying
            text, _, command = n.partition(COMMAND)
            out += terminal.wrap(f"note: {text}" + (":" if command else ""), width)
            out += [f"  $ {command}"] if command else []
    if any(c.paired is not None and c.paired.detail is not None for c in changes):
        out += ["", "Full detail of one kernel group: --kernel NAME"]
    return "\n".join(out)


def overview_markdown(report: TriageReport, top: int = DEFAULT_TOP, show_all: bool = False) -> str:
    """The same for a pull-request comment: a table, and each changed group's diagnosis in a
    collapsed block. Kernel names go in code spans; other text is escaped only where Markdown
    would read HTML in it (pragma_ncu.report.markdown), entities only inside the HTML of
    <summary>."""
    changes, quiet = shown_changes(report, top, show_all), quiet_groups(report, top, show_all)
    rows_of = [*changes, *(as_change(g) for g in quiet)]
    head = headline(report)
    out = ["## pragma-ncu triage", "", f"**{head[1]}**", "", head[0], ""]
    for role, side in (("BASE", report.base), ("NEW", report.new)):
        out.append(f"- {role} {md.code(side.label)} ({side.kind}, "
                   f"{md.text(side.device or 'device unknown')})")
    out.append("")
    if rows_of:
        rows = [[*row_cells(i, c, report), KIND_WORDS[c.kind], cause_text(c, report)]
                for i, c in enumerate(rows_of, 1)]
        cells = [[md.cell(md.code(c)) if col == 1 else md.cell(c) for col, c in enumerate(row)]
                 for row in rows]
        out += [tabulate(cells, [*row_headers(report), "what", "cause (evidence)"],
                         tablefmt="github", disable_numparse=True), ""]
    out += [f"- {md.text(line)}"
            for line in collapsed_line(report, changes, quiet) + membership_lines(report)]
    for n in report.notes:
        text, _, command = n.partition(COMMAND)
        out += [f"> note: {md.text(text)}" + (f":\n>\n> {md.code(command)}" if command else "")]
    for g in (c.paired for c in rows_of):
        if g is not None and g.detail is not None and (g.verdict != UNCHANGED or
                                                       g.match.swapped):
            out += ["", f"<details><summary>{md.html_text(g.name)}: {g.verdict}, "
                    f"{md.html_text(change_text(g))}</summary>", "",
                    md.text(g.detail.diagnosis), *(["", *(f"- [ ] {md.text(c)}"
                                                          for c in g.detail.checks)]
                                                   if g.detail.checks else []),
                    "", "</details>"]
    return md.wrap("\n".join(out)) + "\n"
