"""Rendering a tune run's reasoning trace: every round's historical best against its candidate,
the analysis with the metric values and compendium entries it cites, and the decision taken.

`load_trace` reads a run from the store; `render_markdown`, `render_html` and `trace_json` lay
it out. Numbers are formatted and tables built here, so the jinja2 templates
(templates/trace.md.j2, templates/trace.html.j2) only place them.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import asdict, dataclass
from typing import Any

import jinja2
from tabulate import tabulate

from pragma_ncu.infra import sources
from pragma_ncu.infra.resources import data_path
from pragma_ncu.measure.records import KernelState, RoundRecord, too_noisy, verdict_word
from pragma_ncu.measure.traces import Trace
from pragma_ncu.report import markdown as md
from pragma_ncu.report.moves import NO_MOVES, MovesView, moves_view

DASH = "—"


@dataclass(frozen=True)
class Headline:
    """The top of a trace: the run's outcome, from its summary or, for a run that never wrote
    one (killed, still running), from its rounds."""

    baseline_us: float | None
    best_us: float | None
    speedup: float | None
    best_round: int | None
    rounds: int
    device: str
    stop_reason: str
    llm: str
    ceiling_gbps: float | None
    compute_rate: float | None = None  # FLOP/s of the compute ceiling (with the spec's FLOPs)
    compute_name: str = ""
    too_noisy: str = ""  # the last round too noisy to decide, in words ("" when none)


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class RoundView:
    """One round, ready to lay out: the record plus its formatted tables."""

    record: RoundRecord
    title: str
    comparison: Table
    metrics: Table
    search: str
    space: str
    failure: str  # why the candidate failed; "" when it was verified
    new_source: bool  # the variant's source appears for the first time in the trace
    verdict: str = ""  # "accepted", "not accepted", or "undecided (too noisy)"
    moves: MovesView = NO_MOVES  # the round's source moves


@dataclass(frozen=True)
class Mark:
    """A point (kind best | candidate | failed) or a bar (kind bar: x, y is its top left corner)
    in a chart, in SVG pixels."""

    x: float
    y: float
    kind: str
    label: str  # the tooltip
    width: float = 0.0
    height: float = 0.0
    text: str = ""  # shown beside the mark


@dataclass(frozen=True)
class Chart:
    """An SVG chart's geometry in pixels; the template draws it."""

    title: str
    y_label: str
    x_ticks: tuple[tuple[float, str], ...]
    y_ticks: tuple[tuple[float, str], ...]
    marks: tuple[Mark, ...]
    line: str = ""  # polyline points, "x,y x,y ..."
    ref: tuple[float, str] | None = None  # a horizontal reference line: pixel y, label
    x_label: str = "round"
    width: int = 640
    height: int = 260
    left: int = 60
    top: int = 16
    right: int = 624
    bottom: int = 224


# --- loading ---------------------------------------------------------------------------------


def trace_json(trace: Trace) -> dict[str, Any]:
    """`{"run": {...}, "rounds": [RoundRecord.to_json(), ...]}`: stable, for scripts."""
    return {"run": asdict(trace.run), "rounds": [r.to_json() for r in trace.rounds]}


# --- numbers ---------------------------------------------------------------------------------


def fmt_us(value: float | None) -> str:
    """Microseconds: 2 decimals, 3 below one µs."""
    if value is None:
        return DASH
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.3f}"


def fmt_pct(value: float | None) -> str:
    """A percentage (already times 100) with one decimal."""
    return DASH if value is None else f"{value:.1f}%"


def fmt_x(value: float | None) -> str:
    """A speedup as 1.23×."""
    return DASH if value is None else f"{value:.2f}×"


def fmt_num(value: Any) -> str:
    """A metric value: 3 significant digits, thousands separators from 100 on."""
    if value is None:
        return DASH
    if not isinstance(value, int | float) or isinstance(value, bool):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num and den else None


def _objective(state: KernelState | None) -> float | None:
    return state.objective_us if state is not None and state.verified else None


# --- the top ---------------------------------------------------------------------------------


def headline(trace: Trace) -> Headline:
    """The run's outcome; the summary's values win, the rounds fill in what it lacks."""
    s, rounds = trace.run.summary, trace.rounds
    base = s.get("baseline_us") or (_objective(rounds[0].candidate) if rounds else None)
    last_best = next((r.best_after for r in reversed(rounds) if r.best_after), None)
    best = s.get("best_us") or _objective(last_best)
    stop = s.get("stop_reason") or next(
        (r.decision.reason for r in reversed(rounds) if r.decision.action == "stop"), "")
    return Headline(
        baseline_us=base, best_us=best, speedup=s.get("speedup") or _ratio(base, best),
        best_round=s.get("best_round", last_best.round if last_best else None),
        rounds=s.get("rounds") or len(rounds), device=s.get("device") or trace.run.device,
        stop_reason=stop, llm=str(s.get("llm") or "none"),
        ceiling_gbps=s.get("ceiling_gbps"), compute_rate=s.get("compute_rate"),
        compute_name=str(s.get("compute_name") or ""),
        too_noisy=str(s.get("too_noisy") or too_noisy(rounds)["too_noisy"]))


def overview_table(trace: Trace, base: float | None) -> Table:
    """One line per round: what it ran, what came out, what was decided."""
    rows = []
    for r in trace.rounds:
        cand = _objective(r.candidate)
        best = _objective(r.best_after)
        rows.append((str(r.round), r.action, str(r.variant.get("name", "?")),
                     fmt_us(cand) if cand else "failed", fmt_us(best), fmt_x(_ratio(base, best)),
                     verdict_word(r.decision, no="no"), r.decision.action))
    return Table(("round", "ran", "variant", "candidate µs", "best µs", "best × baseline",
                  "accepted", "next"), tuple(rows))


# --- one round -------------------------------------------------------------------------------


def _params(state: KernelState) -> str:
    return ", ".join(f"{k}={v}" for k, v in state.params.items()) or "(none)"


def _time(state: KernelState, shape: str) -> str:
    if shape not in state.times_us:
        return DASH
    noise = state.noise_us.get(shape)
    return fmt_us(state.times_us[shape]) + (f" ±{noise:.2f}" if noise else "")


def _state_column(state: KernelState | None, shapes: list[str], best: float | None,
                  base: float | None, missing: str) -> list[str]:
    if state is None:
        return [missing] + [DASH] * (len(shapes) + 9)
    obj = _objective(state)
    status = "verified" if state.verified else f"failed: {state.failure or 'not verified'}"
    frac = state.ceiling_fraction
    return [f"{state.variant} (round {state.round})", _params(state), status,
            *(_time(state, s) for s in shapes), fmt_us(obj), fmt_x(_ratio(best, obj)),
            fmt_x(_ratio(base, obj)), fmt_pct(100 * frac if frac is not None else None),
            DASH if state.registers is None else str(state.registers),
            state.classification or DASH, state.profiler or DASH]


def comparison_table(record: RoundRecord, base: float | None) -> Table:
    """Historical best (entering the round) against the round's candidate, side by side."""
    states = [s for s in (record.candidate, record.best_before) if s is not None]
    shapes = list(dict.fromkeys(k for s in states for k in s.times_us))
    labels = ["variant", "parameters", "status", *(f"time {s} (µs)" for s in shapes),
              "objective (geomean µs)", "speedup vs best", "speedup vs baseline",
              "% of roofline", "registers", "classification", "profiled with"]
    best_obj = _objective(record.best_before)
    columns = [_state_column(record.best_before, shapes, best_obj, base,
                             "none yet (baseline round)"),
               _state_column(record.candidate, shapes, best_obj, base, "none verified")]
    return Table(("", "historical best", "candidate"),
                 tuple(zip(labels, columns[0], columns[1], strict=True)))


def metrics_table(record: RoundRecord) -> Table:
    """The key metrics both kernels were profiled with, and how much the candidate moved them."""
    if record.best_before is None or record.candidate is None:
        return Table(("metric", "best", "candidate", "Δ"), ())
    best, cand = record.best_before.metrics, record.candidate.metrics
    rows = []
    for name in (n for n in best if n in cand):
        b, c = best[name], cand[name]
        delta = f"{100 * (c - b) / abs(b):+.1f}%" if b else DASH
        rows.append((name, fmt_num(b), fmt_num(c), delta))
    return Table(("metric", "best", "candidate", "Δ"), tuple(rows))


def _count(value: Any) -> str:
    """A search counter: a number, or {reason: count} shown as its total with the reasons."""
    if isinstance(value, dict):
        parts = ", ".join(f"{k} {v}" for k, v in sorted(value.items()))
        return f"{sum(value.values())}" + (f" ({parts})" if parts else "")
    return DASH if value is None else str(value)


def search_line(record: RoundRecord) -> str:
    """The round's search in one line: strategy, counters, wall time; and where the round's
    time went (a record that kept its phases)."""
    s = record.search
    if not s:
        return "no search ran" + _phases_text(record)
    wall = s.get("wall_s")
    return (f"strategy {s.get('strategy', DASH)}; evaluated {_count(s.get('evaluated'))}, "
            f"verified {_count(s.get('verified'))}, pruned {_count(s.get('pruned'))}, "
            f"failed {_count(s.get('failed'))}; wall "
            + (f"{wall:.1f} s" if isinstance(wall, int | float) else DASH)
            + _phases_text(record))


PHASE_NAMES = {"search": "search", "retest": "re-test", "check": "check",
               "side_by_side": "side by side", "profile": "profile"}


def _phases_text(record: RoundRecord) -> str:
    if not record.phases:
        return ""
    return f"; the round {record.wall_s:.1f} s: " + ", ".join(
        f"{PHASE_NAMES.get(k, k)} {v:.1f} s" for k, v in record.phases.items())


def space_line(record: RoundRecord) -> str:
    """The parameter values the round searched, as `NAME ∈ {a, b}; ...`."""
    return "; ".join(f"{k} ∈ {{{', '.join(str(v) for v in vals)}}}"
                     for k, vals in record.space.items())


def failure_text(record: RoundRecord) -> str:
    """Why the round has no verified candidate; "" when it has one."""
    if record.candidate is not None and record.candidate.verified:
        return ""
    if record.candidate is not None:
        return record.candidate.failure or "the candidate was not verified at every shape"
    return record.coder_error or "no candidate was verified at every shape"


def round_views(trace: Trace, base: float | None) -> list[RoundView]:
    """Every round with its tables; a variant's source is flagged new on first appearance."""
    seen: set[str] = set()
    views = []
    for r in trace.rounds:
        source = str(r.variant.get("source") or "")
        views.append(RoundView(
            record=r, title=f"Round {r.round} — {r.action} ({r.variant.get('name', '?')})",
            comparison=comparison_table(r, base), metrics=metrics_table(r),
            search=search_line(r), space=space_line(r), failure=failure_text(r),
            new_source=bool(source) and source not in seen,
            verdict=verdict_word(r.decision, "accepted", "not accepted",
                                 "undecided (too noisy)"),
            moves=moves_view(r)))
        seen.add(source)
    return views


# --- charts ----------------------------------------------------------------------------------


def _x_slots(chart: Chart, n: int) -> list[float]:
    step = (chart.right - chart.left) / max(n, 1)
    return [chart.left + (i + 0.5) * step for i in range(n)]


def _scale(value: float, lo: float, hi: float, chart: Chart) -> float:
    return round(chart.bottom - (value - lo) / (hi - lo) * (chart.bottom - chart.top), 1)


def _nice_range(lo: float, hi: float) -> tuple[float, float, float]:
    """`lo`, `hi` widened to multiples of a round step (1, 2, 2.5 or 5 times a power of ten)
    that cuts the range into at most about six ticks, and that step."""
    raw = (hi - lo) / 5 or 0.1
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    # The epsilon keeps float noise (1.05 / 0.05 = 21.000000000000004) from adding a step.
    return math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step, step


def _y_ticks(lo: float, hi: float, step: float, chart: Chart,
             fmt: str) -> tuple[tuple[float, str], ...]:
    count = round((hi - lo) / step)
    return tuple((_scale(lo + i * step, lo, hi, chart), fmt.format(lo + i * step))
                 for i in range(count + 1))


def speedup_chart(trace: Trace, base: float | None) -> Chart | None:
    """Speedup over the baseline of the historical best after each round (line), the round's
    candidate (dots), failed rounds (crosses on the floor)."""
    if not base or not trace.rounds:
        return None
    best = [_ratio(base, _objective(r.best_after)) for r in trace.rounds]
    cand = [_ratio(base, _objective(r.candidate)) for r in trace.rounds]
    values = [v for v in best + cand if v is not None] + [1.0]
    lo, hi, step = _nice_range(min(values) * 0.95, max(values) * 1.05)
    frame = Chart("speedup over the baseline, by round", "× baseline", (), (), ())
    xs = _x_slots(frame, len(trace.rounds))
    marks, points = [], []
    for x, r, b, c in zip(xs, trace.rounds, best, cand, strict=True):
        if b is not None:
            points.append(f"{x:.1f},{_scale(b, lo, hi, frame)}")
            marks.append(Mark(x, _scale(b, lo, hi, frame), "best",
                              f"round {r.round}: best {fmt_x(b)}"))
        if c is not None:
            marks.append(Mark(x, _scale(c, lo, hi, frame), "candidate",
                              f"round {r.round}: candidate {fmt_x(c)}"))
        else:
            marks.append(Mark(x, frame.bottom, "failed", f"round {r.round}: candidate failed"))
    return Chart(frame.title, frame.y_label, _x_ticks(trace, xs),
                 _y_ticks(lo, hi, step, frame, "{:.2f}×"), tuple(marks), " ".join(points),
                 (_scale(1.0, lo, hi, frame), "baseline"))


def _x_ticks(trace: Trace, xs: list[float]) -> tuple[tuple[float, str], ...]:
    every = max(1, len(xs) // 20)  # keep labels legible on long runs
    return tuple((x, str(r.round)) for i, (x, r) in enumerate(zip(xs, trace.rounds, strict=True))
                 if i % every == 0)


def roofline_chart(trace: Trace) -> Chart | None:
    """The historical best after each round on the roofline: a real roofline chart (FLOP per
    byte against FLOP/s, under the copy and compute ceilings) when the spec counts FLOPs,
    else achieved bandwidth as a fraction of the measured copy ceiling."""
    return flop_roofline_chart(trace) or memory_roofline_chart(trace)


def memory_roofline_chart(trace: Trace) -> Chart | None:
    fracs = [r.best_after.ceiling_fraction if r.best_after else None for r in trace.rounds]
    if all(f is None for f in fracs):
        return None
    _, hi, step = _nice_range(0, max(100.0, *(100 * f for f in fracs if f is not None)) * 1.08)
    frame = Chart("memory roofline: achieved / measured copy ceiling", "% of copy ceiling",
                  (), (), ())
    xs = _x_slots(frame, len(trace.rounds))
    width = 0.6 * (frame.right - frame.left) / len(xs)
    marks = []
    for x, r, f in zip(xs, trace.rounds, fracs, strict=True):
        if f is not None:
            y = _scale(100 * f, 0, hi, frame)
            marks.append(Mark(round(x - width / 2, 1), y, "bar",
                              f"round {r.round}: {fmt_pct(100 * f)}", round(width, 1),
                              round(frame.bottom - y, 1), fmt_pct(100 * f)))
    return Chart(frame.title, frame.y_label, _x_ticks(trace, xs),
                 _y_ticks(0, hi, step, frame, "{:.0f}%"), tuple(marks),
                 ref=(_scale(100, 0, hi, frame), "copy ceiling"))


def flop_roofline_chart(trace: Trace) -> Chart | None:
    """Log-log roofline: the copy ceiling's slope up to the compute ceiling's flat roof, and
    the historical best of each round as a dot (needs FLOPs and both ceilings)."""
    head = headline(trace)
    points = [(r.round, r.best_after.intensity, r.best_after.flop_rate) for r in trace.rounds
              if r.best_after and r.best_after.intensity and r.best_after.flop_rate]
    if not points or not head.ceiling_gbps or not head.compute_rate:
        return None
    bw, peak = head.ceiling_gbps * 1e9, head.compute_rate
    knee = peak / bw
    xs = [p[1] for p in points if p[1]] + [knee]
    x_lo, x_hi = math.floor(math.log10(min(xs) / 4)), math.ceil(math.log10(max(xs) * 4))
    ys = [p[2] for p in points if p[2]] + [peak, bw * 10 ** x_lo]
    y_lo, y_hi = math.floor(math.log10(min(ys) / 2)), math.ceil(math.log10(max(ys) * 1.5))
    frame = Chart(f"roofline: {head.compute_name} {peak / 1e12:.1f} TFLOP/s, copy "
                  f"{head.ceiling_gbps:,.0f} GB/s (measured)", "FLOP/s", (), (), ())

    def px(i: float) -> float:
        return round(frame.left + (math.log10(i) - x_lo) / (x_hi - x_lo)
                     * (frame.right - frame.left), 1)

    def py(f: float) -> float:
        return _scale(math.log10(f), y_lo, y_hi, frame)

    roof = [(10 ** x_lo, bw * 10 ** x_lo), (knee, peak), (10 ** x_hi, peak)]
    line = " ".join(f"{px(i)},{py(max(f, 10 ** y_lo))}" for i, f in roof)
    marks = tuple(Mark(px(i), py(f), "best", f"round {rnd}: {f / 1e12:.2f} TFLOP/s at "
                       f"{i:.1f} FLOP/byte") for rnd, i, f in points if i and f)
    x_ticks = tuple((px(10.0 ** e), f"{10.0 ** e:g}") for e in range(x_lo, x_hi + 1))
    y_ticks = tuple((py(10.0 ** e), f"{10.0 ** e / 1e12:g}T") for e in range(y_lo, y_hi + 1))
    return Chart(frame.title, "FLOP/s", x_ticks, y_ticks, marks, line,
                 x_label="arithmetic intensity (FLOP per byte)")


# --- rendering -------------------------------------------------------------------------------


def md_table(table: Table) -> str:
    """A Table as a GitHub-flavoured Markdown table."""
    rows = [[md.cell(c) for c in row] for row in table.rows]
    return tabulate(rows, [md.cell(h) for h in table.headers], tablefmt="github",
                    disable_numparse=True)


def _environment(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(data_path("templates"))),
                             undefined=jinja2.StrictUndefined, autoescape=autoescape,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(us=fmt_us, pct=fmt_pct, x=fmt_x, num=fmt_num, md_table=md_table,
                       fence=md.fence, md=md.cell, text=md.text)
    return env


def _context(trace: Trace) -> dict[str, Any]:
    head = headline(trace)
    return {"run": trace.run, "head": head, "overview": overview_table(trace, head.baseline_us),
            "rounds": round_views(trace, head.baseline_us), "config": trace.run.config,
            "created": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(trace.run.created))}


def render_markdown(trace: Trace) -> str:
    """GitHub-flavoured Markdown that also reads well in a terminal."""
    text = sources.printable(  # a source's bytes that are not UTF-8 are shown as U+FFFD
        _environment(autoescape=False).get_template("trace.md.j2").render(**_context(trace)))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def render_html(trace: Trace) -> str:
    """One self-contained HTML file (inline CSS and SVG, no scripts, nothing fetched)."""
    context = _context(trace)
    context.update(speedup=speedup_chart(trace, context["head"].baseline_us),
                   roofline=roofline_chart(trace))
    return sources.printable(
        _environment(autoescape=True).get_template("trace.html.j2").render(**context))
