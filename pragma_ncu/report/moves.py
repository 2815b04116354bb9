"""The source moves of a round, laid out for the trace: per move the finding that called for
it, what became of it (searched, refused, dropped) and why, the knob values searched, the
values the round's winner took, the measured effect, and the source diff."""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.measure.records import MoveTrial, RoundRecord

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
    return "; ".join(f"{k} ∈ {{{', '.join(_value(v) for v in vals)}}}"
                     for k, vals in t.knobs.items()) or DASH


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
