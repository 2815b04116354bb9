"""An application's explanation on one screen, and one kernel group's full detail.

The screen: total GPU time; the kernel groups ranked by estimated saving (GPU time x headroom
to the group's attainable roofline), each with its launches, time share, % of roofline, the
saving and the application's time had it reached its roofline, then its top cause with the
evidence in a few words and where its source is, when found; then one line for the rest, how
to tune the first group whose source was found, and how to see the rest. Text (100 columns) or
Markdown. A group's detail (`--kernel NAME`) is a header with the group's figures followed by
the per-kernel section `explain` prints for a single kernel, on the group's median launch.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from tabulate import tabulate

from pragma_ncu.diagnose.findings import Diagnosis, Evidence
from pragma_ncu.profile.profiles import Profile
from pragma_ncu.report import markdown as md
from pragma_ncu.report import terminal
from pragma_ncu.report.diagnosis import explain_markdown, explain_text, lower_precision_words
from pragma_ncu.report.terminal import short_name
from pragma_ncu.report.triage_overview import duration_text
from pragma_ncu.triage.causes import number

if TYPE_CHECKING:  # the API's result types, named in annotations only (no import cycle)
    from pragma_ncu.api.application import Application, GroupExplanation

SCREEN = 60  # lines
DEFAULT_TOP = 10
NAME_WIDTH = 30
NAME_MIN = 16  # characters of a name kept beside what tells two groups apart
INDENT = " " * 6
HEADERS = ["#", "kernel", "launches", "GPU time", "share", "roofline", "saving",
           "app at roofline"]
NAME_COLUMN = HEADERS.index("kernel")


def _cut(value: str, width: int) -> str:
    return value if len(value) <= width else value[: width - 3] + "..."


def _pct(fraction: float | None) -> str:
    return "?" if fraction is None else f"{100 * fraction:.0f}%"


def headline(app: Application, profile: Profile) -> list[str]:
    """Where the report came from, and the total GPU time."""
    device = next((str(k.metrics["device__attribute_display_name"].value)
                   for k in profile.kernels if "device__attribute_display_name" in k.metrics), "")
    facts = ", ".join(f for f in (profile.reader, device, f"ncu {profile.ncu_version}"
                                  if profile.ncu_version else "") if f)
    return [f"Report {profile.report or '(in memory)'}  ({facts})",
            f"GPU time {duration_text(app.total_us)} (the sum of kernel durations): "
            f"{app.launches} launches of {app.group_count} kernel groups"]


def row(index: int, app: Application, g: GroupExplanation, names: dict[int, str]) -> list[str]:
    saving, after = g.saving_us, app.after_us(g)
    speedup = f" ({app.total_us / after:.2f}x)" if after else ""
    return [str(index), names[id(g)], str(g.group.count), duration_text(g.total_us),
            f"{100 * app.share(g):.1f}%", _pct(g.reached),
            "?" if saving is None else duration_text(saving),
            "?" if after is None else duration_text(after) + speedup]


def columns(rows: list[list[str]]) -> list[str]:
    """Rows as lines of left-aligned columns two spaces apart, each as wide as its widest cell
    (tabulate pads a header by two more, which a 100-column screen cannot spare)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
            for r in rows]


def _names(groups: tuple[GroupExplanation, ...], width: int) -> dict[int, str]:
    """Each group's name in `width` characters, told apart from every other: no namespaces,
    the middle cut out of a long one (template arguments differ at either end), and where two
    would read the same, the launch configuration (or the first launch) added."""
    names = {id(g): _middle(short_name(g.group.name), width) for g in groups}
    for extra in (lambda g: g.group.config.label(), lambda g: f"launch {g.group.first_index}"):
        seen: dict[str, int] = {}
        for g in groups:
            seen[names[id(g)]] = seen.get(names[id(g)], 0) + 1
        for g in groups:
            room = width - len(extra(g)) - 3
            if seen[names[id(g)]] > 1 and room >= NAME_MIN:
                names[id(g)] = _middle(short_name(g.group.name), room) + f" [{extra(g)}]"
    return names


def _middle(value: str, width: int) -> str:
    """`value` in `width` characters, its middle replaced by '...' when too long."""
    if len(value) <= width:
        return value
    head = (width - 3 + 1) // 2
    return value[:head] + "..." + value[len(value) - (width - 3 - head):]


def evidence_words(d: Diagnosis, width: int = 60) -> str:
    """The top finding's first figures that fit in `width`, named by the compendium's titles
    where it has them (at least the first, cut to fit)."""
    if not d.findings:
        return ""
    titles = {c.metric: c.title for c in d.citations}
    figures = [_figure(e, titles) for e in d.findings[0].evidence
               if isinstance(e.value, float | int)][:2]
    words = figures[:1]
    for figure in figures[1:]:
        if len("; ".join([*words, figure])) <= width:
            words.append(figure)
    return _cut("; ".join(words), width)


def _figure(e: Evidence, titles: dict[str, str]) -> str:
    title = titles.get(e.metric.split(" ")[0], e.metric)
    note = f" ({e.note})" if e.note else ""
    return f"{title} {number(float(e.value), e.unit)}{note}"


def cause_line(g: GroupExplanation, width: int = terminal.DEFAULT_WIDTH - len(INDENT)) -> str:
    """'cause: small_grid: Too few blocks for the GPU (Grid size (blocks) 32)'."""
    d = g.diagnosis
    if not d.findings:
        return "cause: none found" + ("" if g.reached is not None else
                                      " (no speed-of-light figures in this report)")
    top = d.findings[0]
    head = f"cause: {top.bottleneck}: {top.title}"
    words = evidence_words(d, max(20, width - len(head) - 3))
    return _cut(head + (f" ({words})" if words else ""), width)


def lower_precision_short(g: GroupExplanation) -> str:
    """The lower-precision figure of an FP32 GEMM-like group on SIMT pipes, short; "" for any
    other."""
    return lower_precision_words(g.diagnosis.roofline.lower_precision, " a launch")


def _rest(app: Application, shown: int) -> list[str]:
    rest = app.groups[shown:]
    if not rest:
        return []
    time = sum(g.total_us for g in rest)
    known = [g.saving_us for g in rest if g.saving_us is not None]
    saving = f"; est. saving {duration_text(sum(known))}" if known else ""
    return [f"{len(rest)} more kernel groups ({duration_text(time)}, "
            f"{100 * time / app.total_us:.1f}% of the GPU time{saving}): --all lists them"]


def _tune_hint(shown: tuple[GroupExplanation, ...], width: int) -> list[str]:
    """How to tune the first shown group whose source was found, a command a line (--kernel
    NAME says it for any other)."""
    first = next((g for g in shown if g.tune_commands()), None)
    if first is None:
        return []
    return [*_wrapped([f"To tune {first.group.name} ({first.source}:{first.source_line}): "
                       "draft its spec, fill in what init marks <fill>, then tune:"], width),
            *[f"  $ {c}" for c in first.tune_commands()]]


def _notes(app: Application) -> list[str]:
    out = []
    unknown = app.unknown
    if unknown:
        out.append(f"No estimate for {len(unknown)} group(s) ("
                   f"{duration_text(sum(g.total_us for g in unknown))}): the report has no "
                   "speed-of-light figures for them (ncu's SpeedOfLight section, which "
                   "`ncu -o app ./app` collects by default); they rank by GPU time.")
    out.append("saving = the group's GPU time x its headroom to the attainable roofline (the "
               "time its bytes, FLOPs or pipe work need at the ceilings); app at roofline = the "
               "total less that saving.")
    out.append("Full detail of one kernel group (its diagnosis, how to tune it): --kernel NAME")
    return out


def _wrapped(lines: list[str], width: int) -> list[str]:
    return [part for line in lines for part in terminal.wrap(line, width)]


def _shown(app: Application, top: int, show_all: bool) -> tuple[GroupExplanation, ...]:
    return app.groups if show_all else app.groups[:top]


def overview_text(app: Application, profile: Profile, top: int | None = None,
                  show_all: bool = False, width: int = terminal.DEFAULT_WIDTH) -> str:
    """The application on one screen (terminal text of `width` columns, its prose wrapped):
    the first `top` groups; by default DEFAULT_TOP, fewer where their lines (long names,
    sources) would not fit in SCREEN lines; all with `show_all`."""
    rows, width = top or DEFAULT_TOP, terminal.clamp(width)
    screen = _overview(app, profile, _shown(app, rows, show_all), width)
    while top is None and not show_all and rows > 1 and screen.count("\n") >= SCREEN:
        rows -= 1
        screen = _overview(app, profile, _shown(app, rows, show_all), width)
    return screen


def _overview(app: Application, profile: Profile, shown: tuple[GroupExplanation, ...],
              width: int) -> str:
    full = _names(app.groups, width - len(INDENT))
    names = {id(g): _cut(short_name(g.group.name), NAME_WIDTH) for g in app.groups}
    out = [*_wrapped(headline(app, profile), width), "",
           "Kernel groups, largest estimated saving first:"]
    table = columns([HEADERS, *[row(i, app, g, names) for i, g in enumerate(shown, 1)]])
    out.append("  " + table[0])
    for line, g in zip(table[1:], shown, strict=True):
        out.append("  " + line)
        if full[id(g)] != names[id(g)]:  # cut or ambiguous in the table: told apart below
            out.append(INDENT + full[id(g)])
        out.append(INDENT + cause_line(g, width - len(INDENT)))
        lower = lower_precision_short(g)
        if lower:
            out.append(_cut(INDENT + lower, width))
        if g.source is not None:
            out.append(f"{INDENT}source: {g.source}:{g.source_line}")
    out += ["", *_wrapped(_rest(app, len(shown)), width), *_tune_hint(shown, width),
            *_wrapped(_notes(app), width)]
    return "\n".join(out)


def overview_markdown(app: Application, profile: Profile, top: int | None = None,
                      show_all: bool = False) -> str:
    """The same screen as a Markdown comment (DEFAULT_TOP rows unless `top` says)."""
    shown = _shown(app, top or DEFAULT_TOP, show_all)
    names = _names(app.groups, 200)
    rows = [[*row(i, app, g, names), cause_line(g, 200).removeprefix("cause: ")]
            for i, g in enumerate(shown, 1)]
    cells = [[md.cell(md.code(c) if col == NAME_COLUMN else c) for col, c in enumerate(r)]
             for r in rows]
    out = [f"### {md.text(headline(app, profile)[1])}", "",
           md.code(profile.report or "(in memory)"), "",
           tabulate(cells, [*HEADERS, "top cause"], tablefmt="github", disable_numparse=True),
           ""]
    tune = [f"- {md.code(g.group.name)} ({md.code(f'{g.source}:{g.source_line}')}): "
            f"{md.code(' && '.join(g.tune_commands()))}" for g in shown if g.tune_commands()]
    if tune:
        out += ["To tune a kernel whose source was found:", "", *tune, ""]
    out += [md.text(line) for line in [*_rest(app, len(shown)), *_notes(app)]]
    return md.wrap("\n".join(out)) + "\n"


def group_header(app: Application, g: GroupExplanation, width: int = terminal.DEFAULT_WIDTH
                 ) -> list[str]:
    """A group's figures, above its median launch's per-kernel section."""
    d = g.group.durations_us
    after = app.after_us(g)
    lines = [f"Kernel group {g.group.name} ({g.group.config.label()})",
             f"{g.group.count} launches, {duration_text(g.total_us)} = "
             f"{100 * app.share(g):.1f}% of the GPU time; per launch median "
             f"{duration_text(g.group.median_us)}"
             + (f", {duration_text(min(d))} .. {duration_text(max(d))}" if d else "")
             + f"; below: launch {g.kernel.index}, the median"]
    if g.saving_us is not None and after is not None:
        lines.append(f"At its attainable roofline ({_pct(g.reached)} of it now, set by "
                     f"{g.diagnosis.roofline.attainable_by}) it would save "
                     f"{duration_text(g.saving_us)}: the application "
                     f"{duration_text(app.total_us)} -> {duration_text(after)}")
    if g.diagnosis.roofline.lower_precision:
        lines.append("Per launch, " + g.diagnosis.roofline.lower_precision_text())
    lines = _wrapped(lines, width)
    if g.source is not None:
        lines += _wrapped([f"Source {g.source}:{g.source_line}; to tune it, draft its spec, "
                           "fill in what init marks <fill>, then tune:"], width)
        lines += [f"  $ {c}" for c in g.tune_commands()]
    return lines


def groups_text(app: Application, markdown: bool = False,
                width: int = terminal.DEFAULT_WIDTH) -> str:
    """Each shown group's full detail (`--kernel NAME`, or a report of one group): terminal
    text of `width` columns, or Markdown."""
    width = terminal.clamp(width)
    sep = "\n\n" + ("---\n\n" if markdown else "=" * min(78, width) + "\n\n")
    parts = []
    for g in app.groups:
        if markdown:
            head = md.wrap("\n".join(f"> {md.text(line)}" for line in group_header(app, g)))
            parts.append(head + "\n\n" + explain_markdown(g.diagnosis, g.kernel))
        else:
            head = "\n".join(group_header(app, g, width))
            parts.append(head + "\n\n" + explain_text(g.diagnosis, g.kernel, width))
    return sep.join(parts)


def to_json(app: Application) -> dict[str, Any]:
    """The application with per-launch detail: every launch's index and duration, and each
    group's median-launch diagnosis."""
    return {"total_us": app.total_us, "launches": app.launches,
            "groups_in_report": app.group_count,
            "groups": [_group_json(app, i, g) for i, g in enumerate(app.groups, 1)]}


def _group_json(app: Application, rank: int, g: GroupExplanation) -> dict[str, Any]:
    config = g.group.config
    return {
        "rank": rank, "name": g.group.name, "signature": g.group.signature,
        "config": {"grid": list(config.grid), "block": list(config.block),
                   "dynamic_smem": config.dynamic_smem, "nvtx": config.nvtx,
                   "label": config.label()},
        "count": g.group.count, "total_us": g.total_us, "share": app.share(g),
        "median_us": g.group.median_us, "roofline_fraction": g.reached,
        "roofline_by": g.diagnosis.roofline.attainable_by, "saving_us": g.saving_us,
        "lower_precision": [asdict(p) for p in g.diagnosis.roofline.lower_precision],
        "app_after_us": app.after_us(g),
        "source": str(g.source) if g.source else None, "source_line": g.source_line,
        "tune": list(g.tune_commands()), "median_launch": g.kernel.index,
        "launches": [{"index": k.index, "duration_us": d}
                     for k, d in zip(g.group.launches, g.group.durations, strict=True)],
        "diagnosis": g.diagnosis.to_json(),
    }
