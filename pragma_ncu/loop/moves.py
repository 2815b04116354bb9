"""The tune loop's side of the source moves (`pragma_ncu.coder.moves`).

`options` tells the conductor which moves fit the historical best's source. `plan` builds the
variant of a moves round: the chosen moves applied to the best's plain source, each rewrite
rendered at its boldest point and checked (it must parse, and compile) before the search, a
failing move dropped and recorded. `measured` says afterwards what each move did: the values
the winner took and its effect (the best time the search saw with the move at its defaults,
over the best time it saw), or why it was dropped (no point with it verified).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pragma_ncu.coder import moves as catalog
from pragma_ncu.coder.moves import assemble as asm
from pragma_ncu.coder.moves.base import Applied, Refused, Subject
from pragma_ncu.coder.variant import Variant
from pragma_ncu.conductor.situation import MoveOption
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.infra.errors import PragmaError
from pragma_ncu.loop.context import Context, spec_of
from pragma_ncu.measure.records import Decision, KernelState, MoveChoice, MoveTrial
from pragma_ncu.search.feasibility import Limits
from pragma_ncu.search.results import Evaluation
from pragma_ncu.spec.model import ParamValue, TaskSpec
from pragma_ncu.syntax.tree import syntax_tree

SpecFor = Callable[[Variant], TaskSpec]  # a variant's spec (loop.context.variant_specs)
UNPARSED = "its rewrite does not parse"


@dataclass(frozen=True)
class MovePlan:
    variant: Variant | None  # None: every move was refused or dropped
    base: asm.Base | None
    applied: tuple[Applied, ...]
    trials: tuple[MoveTrial, ...]  # the refused and dropped ones (searched ones come later)

    @property
    def failure(self) -> str:
        """Why no move could be applied: each move's reason, or the one they all share."""
        reasons = {t.reason for t in self.trials}
        if len(self.trials) > 1 and len(reasons) == 1:
            statuses = " or ".join(sorted({t.status for t in self.trials}))
            names = ", ".join(t.move for t in self.trials)
            return f"no move could be applied: every one ({names}) was {statuses}: " \
                f"{reasons.pop()}"
        return "no move could be applied: " + "; ".join(
            f"{t.move} {t.status} ({t.reason})" for t in self.trials)


def options(ctx: Context, variant: Variant, best: KernelState,
            diagnosis: Diagnosis | None) -> tuple[MoveOption, ...]:
    """Every move, read against the best's source."""
    read = _read(ctx, variant, best, diagnosis)
    return options_of(read if isinstance(read, str) else read[1])


def options_of(subject: Subject | str) -> tuple[MoveOption, ...]:
    """Every move read against a subject (or refused with why no move can read it)."""
    if isinstance(subject, str):
        return tuple(MoveOption(m.name, m.answers, m.why, False, subject) for m in catalog.MOVES)
    results = asm.try_moves(subject, catalog.MOVES)
    return tuple(MoveOption(m.name, m.answers, m.why, isinstance(r, Applied),
                            r.reason if isinstance(r, Refused) else "",
                            math.prod(len(k.values) for k in r.knobs)
                            if isinstance(r, Applied) else 1)
                 for m, r in zip(catalog.MOVES, results, strict=True))


def plan(ctx: Context, variant: Variant, best: KernelState, diagnosis: Diagnosis | None,
         decision: Decision, number: int) -> MovePlan:
    """The variant of a moves round, and the moves that did not make it into it."""
    read = _read(ctx, variant, best, diagnosis)
    chosen = {c.move: c for c in decision.moves}
    if isinstance(read, str):
        return MovePlan(None, None, (), tuple(MoveTrial(c.move, c.finding, "refused", read)
                                              for c in decision.moves))
    base, subject = read
    results = asm.try_moves(subject, [catalog.by_name(c.move) for c in decision.moves])
    trials = [MoveTrial(r.move, chosen[r.move].finding, "refused", r.reason)
              for r in results if isinstance(r, Refused)]
    applied = [r for r in results if isinstance(r, Applied)]
    for _ in range(len(applied) + 1):
        if not applied:
            return MovePlan(None, base, (), tuple(trials))
        try:
            built, kept, overlapping = asm.assemble(
                base, applied, f"moves {number}", _note(applied, chosen),
                ctx.spec.source_path.resolve().parent, ctx.options.search.budget.evaluations)
        except (ValueError, PragmaError) as exc:  # composed, they do not give the base back
            trials += [MoveTrial(a.move, chosen[a.move].finding, "dropped",
                                 f"the moves together do not give back the source ({exc})")
                       for a in applied]
            return MovePlan(None, base, (), tuple(trials))
        trials += [MoveTrial(r.move, chosen[r.move].finding, "refused", r.reason)
                   for r in overlapping]
        failed = {a.move: why for a in kept if (why := _check(ctx, built, a, base))}
        trials += [MoveTrial(m, chosen[m].finding, "dropped", why) for m, why in failed.items()]
        if not failed:
            return MovePlan(built, base, tuple(kept), tuple(trials))
        applied = [a for a in kept if a.move not in failed]
    raise AssertionError("unreachable: each pass drops a move or returns")


def measured(planned: MovePlan, decision: Decision, evaluations: Sequence[Evaluation],
             winner: dict[str, ParamValue] | None) -> tuple[MoveTrial, ...]:
    """Each move of the plan: searched (the winner's values, the effect, the diff at the
    winner or the boldest point), dropped (no point with it verified), refused."""
    finding = {c.move: c.finding for c in decision.moves}
    out = list(planned.trials)
    times = [(e.point, e.objective) for e in evaluations if e.ok and e.objective is not None]
    best_all = min((t for _, t in times), default=None)
    for a in planned.applied:
        defaults = {k.name: k.default for k in a.knobs}
        used = [e for e in evaluations if any(e.point.get(k) != v for k, v in defaults.items())]
        if used and not any(e.ok for e in used):
            why = Counter(e.status for e in used).most_common(1)[0][0]
            out.append(MoveTrial(a.move, finding.get(a.move, ""), "dropped",
                                 f"no point with it verified ({why} at all {len(used)})",
                                 a.sites, _knobs(a)))
            continue
        plain = [t for point, t in times if all(point.get(k) == v for k, v in defaults.items())]
        effect = min(plain) / best_all if plain and best_all else None
        won = {k: (winner or {}).get(k, v) for k, v in defaults.items()}
        out.append(MoveTrial(a.move, finding.get(a.move, ""), "searched",
                             "; ".join(a.sites), a.sites, _knobs(a), won, won != defaults,
                             effect, _diff(planned, a, won)))
    return tuple(out)


def move_names() -> dict[str, str]:
    """knob -> the move that adds it."""
    return {k: m.name for m in catalog.MOVES for k in m.knobs}


def tried_lines(records: Sequence[Any]) -> tuple[str, ...]:
    """One line per move tried so far, with its measured effect, for the coder's prompt."""
    lines = []
    for r in records:
        for t in r.moves:
            if t.status == "searched":
                effect = f"{t.effect:.2f}x" if t.effect else "no measured effect"
                lines.append(f"{t.move} (for {t.finding}): searched {t.knobs}; the winner took "
                             f"{t.won}; {effect} over the same search without it; round "
                             f"{r.round} {'accepted' if r.decision.accepted else 'not accepted'}")
            else:
                lines.append(f"{t.move} (for {t.finding}): {t.status}: {t.reason}")
    return tuple(lines)


def _read(ctx: Context, variant: Variant, best: KernelState,
          diagnosis: Diagnosis | None) -> tuple[asm.Base, Subject] | str:
    """What the moves read of the best (see `read`)."""
    return read(lambda v: spec_of(ctx, v), variant, dict(best.params), diagnosis,
                best.registers, ctx.backend.limits)


def read(spec_for: SpecFor, variant: Variant, point: Mapping[str, ParamValue],
         diagnosis: Diagnosis | None = None, registers: int | None = None,
         limits: Limits | None = None) -> tuple[asm.Base, Subject] | str:
    """The one way the moves read a kernel, for tune's rounds and `pragma-ncu moves` alike:
    `variant`'s plain source at `point` (the base a moves round edits) and what the moves
    read of it (with the lines the profile found hot and the registers of its build, where
    known), or why no move can read it. `spec_for` gives a variant's spec (`variant_specs`)."""
    if not catalog.reads(Path(variant.filename)):
        return (f"the source moves rewrite CUDA sources ({', '.join(catalog.SOURCES)}); "
                f"{variant.filename} is not one")
    try:
        base = asm.base_of(variant, spec_for(variant), dict(point))
        spec = spec_for(asm.base_variant(base, "moves base"))
        subject = asm.subject_of(base, spec, dict(point), hot_lines(diagnosis, base.filename),
                                 registers, limits)
    except PragmaError as exc:  # tree-sitter missing, a template that does not render, ...
        return f"{variant.filename} could not be read: {exc}"
    return subject if isinstance(subject, str) else (base, subject)


def hot_lines(diagnosis: Diagnosis | None, filename: str) -> tuple[int, ...]:
    """The lines of the kernel's own file that the profile's samples found hot, hottest first
    (the profile of a rendered template names a file of the same name)."""
    if diagnosis is None:
        return ()
    return tuple(dict.fromkeys(s.line for s in diagnosis.hotspots
                               if Path(s.file).name == filename and s.samples > 0))


def _check(ctx: Context, variant: Variant, applied: Applied, base: asm.Base) -> str:
    return rewrite_error(lambda v: spec_of(ctx, v), ctx.backend.check, variant, applied, base)


def boldest(applied: Applied) -> dict[str, ParamValue]:
    """A move's knobs at their boldest values (each one's last)."""
    return {k.name: k.values[-1] for k in applied.knobs}


def at_boldest(variant: Variant, applied: Applied) -> tuple[str, Variant]:
    """The move's rewrite at its boldest point (the others at their defaults): the text, and
    the variant whose defaults are that point."""
    bold = boldest(applied)
    text = asm.instance(variant, {**_defaults(variant), **bold})
    at = replace(variant, overlay={**variant.overlay, "params": {
        k: ({**v, "default": bold[k]} if isinstance(v, dict) and k in bold else v)
        for k, v in variant.overlay["params"].items()}})
    return text, at


def rewrite_error(spec_for: SpecFor, compile_error: Callable[[TaskSpec], str | None],
                  variant: Variant, applied: Applied, base: asm.Base) -> str:
    """Why the move's rewrite at its boldest point fails to parse or compile (`compile_error`
    of a spec at its defaults: the session's check in a run, a compile without a device in
    `pragma-ncu moves`), or ""."""
    text, at = at_boldest(variant, applied)
    if applied.edits and syntax_tree(text).has_error and not syntax_tree(base.text).has_error:
        return UNPARSED
    try:
        error = compile_error(spec_for(at))
    except PragmaError as exc:
        error = str(exc)
    return f"it does not compile at {boldest(applied)}: {first_error(error)}" if error else ""


def _defaults(variant: Variant) -> dict[str, ParamValue]:
    return {k: (v["default"] if isinstance(v, dict) else v)
            for k, v in variant.overlay["params"].items()}


def first_error(log: str) -> str:
    """The first line of a compiler's log that names an error (else its first line)."""
    lines = [line.strip() for line in log.splitlines() if "error" in line.lower()]
    return (lines[0] if lines else log.strip().splitlines()[0] if log.strip() else "")[:300]


def _knobs(a: Applied) -> dict[str, list[Any]]:
    return {k.name: list(k.values) for k in a.knobs}


def _diff(planned: MovePlan, a: Applied, won: dict[str, ParamValue]) -> str:
    """The source at the winner's values of this move (or its boldest, when the winner left
    it at its defaults), the other moves at theirs, against the base."""
    if planned.variant is None or planned.base is None or not a.edits:
        return ""
    defaults = {k.name: k.default for k in a.knobs}
    shown = won if won != defaults else boldest(a)
    text = asm.instance(planned.variant, {**_defaults(planned.variant), **shown})
    return asm.diff(planned.base.text, text, planned.base.filename)


def _note(applied: Sequence[Applied], chosen: dict[str, MoveChoice]) -> str:
    return "source moves: " + "; ".join(f"{a.move} for {chosen[a.move].finding}"
                                        for a in applied)
