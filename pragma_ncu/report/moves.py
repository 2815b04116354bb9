"""The source moves laid out for people and scripts: a round's, for the trace (per move the
finding that called for it, what became of it (searched, refused, dropped) and why, the knob
values searched, the values the round's winner took, the measured effect, and the source
diff), and `pragma-ncu moves`' review of a kernel before any run (per move whether it fits,
its knobs, where it edits and the launch it searches, or why not; with --diff its rewrite at
the boldest point and whether that compiles)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tabulate import tabulate

from pragma_ncu.coder.moves.assemble import baked
from pragma_ncu.measure.records import MoveTrial, RoundRecord

if TYPE_CHECKING:
    from pragma_ncu.api.moves import MoveReview, MovesReport

DASH = "—"


@dataclass(frozen=True)
class MovesView:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    diffs: tuple[tuple[str, str], ...]  # (move, unified diff)
    asked: str  # the moves the conductor asked for after the round, in a line


NO_MOVES = MovesView((), (), (), "")


def moves_view(record: RoundRecord) -> MovesView:
    rows = tuple((t.move, t.finding or DASH, t.status, _what(t), _space(t), _won(t), _effect(t))
                 for t in record.moves)
    asked = "; ".join(f"{c.move} (for {c.finding}): {c.why}" for c in record.decision.moves)
    return MovesView(("move", "called for by", "status", "what / why", "knob values searched",
                      "winner", "effect"), rows,
                     tuple((t.move, t.diff) for t in record.moves if t.diff), asked)


def _what(t: MoveTrial) -> str:
    return t.reason or "; ".join(t.sites) or DASH


def _space(t: MoveTrial) -> str:
    return knob_space(t.knobs)


def knob_space(knobs: Mapping[str, Sequence[Any]]) -> str:
    """Each knob with its values, the default (the source as written) first."""
    return "; ".join(f"{k} ∈ {{{', '.join(_value(v) for v in vals)}}}"
                     for k, vals in knobs.items()) or DASH


def _won(t: MoveTrial) -> str:
    if t.status != "searched":
        return DASH
    values = ", ".join(f"{k}={_value(v)}" for k, v in t.won.items())
    return f"{values} ({'taken' if t.taken else 'left at its default'})"


def _effect(t: MoveTrial) -> str:
    """How much faster the round's best was than the best the search saw without the move."""
    return DASH if t.effect is None else f"{t.effect:.2f}×"


def _value(v: object) -> str:
    return repr(v) if v == "" else str(v)


# --- `pragma-ncu moves`: a kernel's moves before any run -----------------------------------


def review_lines(report: MovesReport, diff: bool = False) -> list[str]:
    """The review: a table of every move, what is not known offline, and with `diff` each
    fitting move's rewrite at its boldest point and whether it compiles."""
    fits = report.applicable
    lines = [f"{report.kernel} ({report.source}): {len(fits)} of {len(report.moves)} source "
             f"moves fit" + (f": {', '.join(m.move for m in fits)}" if fits else ""),
             f"launch as written: grid {list(report.grid)}, block {list(report.block)}"]
    if report.unread:
        lines.append(f"no move can read this source: {report.unread}")
    lines += ["", review_table(report)]
    lines += [f"note: {n}" for n in report.notes]
    if diff:
        for m in fits if not report.unread else ():
            lines += ["", *_rewrite_lines(m, report)]
        lines += [f"dropped: {m.move}: {m.reason}" for m in report.moves if m.status == "dropped"]
    return lines


def review_table(report: MovesReport) -> str:
    rows = [(m.move, m.status, ", ".join(m.answers), knob_space(
        {k.name: k.values for k in m.knobs}), m.reason or "; ".join(m.sites) or DASH,
        _launch(m)) for m in report.moves]
    return tabulate(rows, headers=["move", "status", "called for by",
                                   "knob values (default first)", "where / why not",
                                   "launch it searches"], maxcolwidths=[None, None, 24, 30, 48, 28])


def _launch(m: MoveReview) -> str:
    if m.grid is None and m.block is None:
        return DASH if m.status != "fits" else "as written"
    return f"grid {list(m.grid or ())}, block {list(m.block or ())}"


def _rewrite_lines(m: MoveReview, report: MovesReport) -> list[str]:
    """A move at its boldest point: the values, whether it compiled, the flags and launch it
    adds there, and its diff."""
    at = ", ".join(f"{k}={_value(v)}" for k, v in m.boldest.items())
    built = ("compiles" + (f" ({report.arch})" if report.arch else "") if m.compiled else
             m.compile_error if m.compiled is False else
             "dropped: " + m.reason if m.status == "dropped" else "not compiled")
    lines = [f"== {m.move} at its boldest ({at}): {built}"]
    if m.flags:
        lines.append(f"nvcc flags added: {' '.join(m.flags)}")
    if m.grid is not None or m.block is not None:
        launch = baked({"grid": list(m.grid or report.grid), "block": list(m.block or
                                                                             report.block)},
                       m.boldest)
        lines.append(f"launch there: grid {launch['grid']}, block {launch['block']}")
    lines.append(m.diff.rstrip("\n") if m.diff else "(no change to the source text)")
    return lines


def review_json(report: MovesReport) -> dict[str, Any]:
    """The review for scripts: every move with its status and reason, knobs, sites, launch,
    and with --diff its diff and compile result."""
    return {
        "kernel": report.kernel, "source": str(report.source),
        "launch": {"grid": list(report.grid), "block": list(report.block)},
        "unread": report.unread or None, "notes": list(report.notes), "arch": report.arch,
        "moves": [{
            "move": m.move, "status": m.status, "applies": m.applies, "reason": m.reason,
            "answers": list(m.answers), "why": m.why,
            "knobs": [{"name": k.name, "values": list(k.values), "default": k.default,
                       "flag": k.flag} for k in m.knobs],
            "sites": list(m.sites),
            "launch": None if m.grid is None and m.block is None else
            {"grid": list(m.grid or report.grid), "block": list(m.block or report.block)},
            "boldest": m.boldest, "flags": list(m.flags), "diff": m.diff or None,
            "compiled": m.compiled, "compile_error": m.compile_error or None,
        } for m in report.moves],
    }
