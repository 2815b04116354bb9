"""The deterministic conductor: rules over the measurements, the profile and the compendium.

After each round it reads the historical best (after acceptance), the round's candidate, the
best's diagnosis and the decisions so far, and picks the next action, in this order:

1. repair   the candidate failed (build, verification, the coder): route an implementation error
            back to the coder, a repeated one to a structural rewrite (AKG's routing). Without an
            LLM there is nothing to repair with: the failed variant is dropped.
2. stop     the round budget is spent, the best is within the target fraction of the memory
            roofline, the run's time budget cannot hold another round, or `patience` rounds
            in a row brought no accepted candidate.
3. retune   a knob move the profile supports and that was not tried yet: a best value at the
            edge of its range (extend it, in one round, as far as the device and the spec
            allow: conductor.ranges), registers limiting occupancy (add a register cap).
            With an LLM and the best far below the roofline, a rewrite is asked for instead,
            after the source moves.
4. moves    the source moves (pragma_ncu.coder.moves) that the best's top findings call for,
            that fit its source and were not tried yet (DRAM traffic below the roofline
            calling for the moves of exposed latency): cheap, so they come before any LLM
            rewrite, and while one is left the run does not stop for want of patience. Below
            the target with no finding's move left and no LLM, the generic moves that fit and
            were not tried (a team per row, vector access, coarsening, the block size) come
            before a stop.
5. rewrite  structural guidance from the compendium's strategies for the top bottleneck; with
            no LLM the run stops there and the trace says what a rewrite would have tried.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pragma_ncu.conductor import analysis, ranges
from pragma_ncu.conductor.accept import UNDECIDED
from pragma_ncu.conductor.fixes import named_fixes
from pragma_ncu.conductor.situation import MoveOption, Policy, Situation
from pragma_ncu.diagnose.cite import Knowledge
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.measure.records import (
    Bullet,
    Decision,
    KernelState,
    MoveChoice,
    RangeChange,
)
from pragma_ncu.measure.roofline import MEMORY
from pragma_ncu.spec.model import Param

REGISTER_CAP = "MAXRREG"  # the parameter a register-cap move adds
REGISTER_CAPS = (0, 32, 64, 128)  # 0: no cap (the flag is left out)
MOVE_FINDINGS = 3  # the top findings whose classes call for source moves
# A finding's score estimates the share of the time its cause accounts for, which bounds what
# answering it can gain: below a tenth, a move could not win beyond the re-test's noise.
MOVE_MIN_SCORE = 0.1
# A class that, while the best runs below its attainable roofline, also reads as another: DRAM
# traffic that carries the time but moves below the roofline moves its bytes too slowly, not too
# many of them (the detector's own reading: "more bytes in flight could push it to the
# roofline"), so the moves that put more bytes in flight answer it as they answer exposed
# memory latency. At the roofline (where the run stops) only fewer bytes help.
BELOW_ROOFLINE_ALSO = {"memory_bandwidth": "memory_latency"}
# The moves that restructure whatever holds a kernel below its roofline, tried (in this order)
# when the findings call for no move that is left: the issue's "several elements per thread,
# wider accesses, a team per row" are answers to more than the one finding that names them.
GENERIC_MOVES = ("row_team", "vectorize", "vectorize_loops", "coarsen", "block_size")
GENERIC = "below the target"  # the finding a generic move is tried for


def decide(situation: Situation, policy: Policy, knowledge: Knowledge | None = None) -> Decision:
    """The next action after a round, with the analysis that justifies it; with `knowledge`
    (the compendium) every profiler metric a bullet states is cited."""
    bullets = tuple(analysis.analysis(situation, policy))
    citations = analysis.citations(situation.diagnosis, bullets, knowledge)
    bullets = analysis.with_cites(bullets, citations)
    base = Decision(round=situation.round, action="stop", reason="", accepted=situation.accepted,
                    acceptance=situation.acceptance, speedup_vs_best=situation.speedup,
                    analysis=bullets, citations=citations, outcome=situation.outcome,
                    speedup_interval=situation.interval, noise_pct=situation.noise_pct)
    far = _far_from_roofline(situation, policy, base)
    decision = (_repair(situation, policy, base) or _stop(situation, policy, base)
                or _first_tune(situation, base)
                or (None if far else _retune(situation, policy, base))
                or _moves(situation, policy, base) or far
                or _rewrite(situation, policy, base))
    return _explained(situation, policy, _naming_the_noise(situation, decision))


def _explained(s: Situation, policy: Policy, decision: Decision) -> Decision:
    """A stop below the target lists each fix the diagnosis named and what became of it."""
    frac = s.best.ceiling_fraction
    if decision.action != "stop" or (frac is not None and frac >= policy.target_fraction):
        return decision
    return replace(decision, fixes=named_fixes(s.diagnosis, s.moves, s.trials,
                                               BELOW_ROOFLINE_ALSO, MOVE_FINDINGS,
                                               MOVE_MIN_SCORE))


def _naming_the_noise(s: Situation, decision: Decision) -> Decision:
    """A run that stops after rounds too noisy to decide says so first: its best may not be
    the best it found, and a quieter machine may decide."""
    if decision.action != "stop":
        return decision
    since = [d for d in (*s.history, decision) if d.round > 0]
    for d in reversed(since):
        if d.accepted:
            break
        if d.outcome == UNDECIDED:
            return _with(decision, "stop", f"round {d.round} was {d.acceptance}; "
                         f"{decision.reason}")
    return decision


def _repair(s: Situation, policy: Policy, base: Decision) -> Decision | None:
    if not s.failure:
        return None
    if s.round >= policy.max_rounds:
        return _with(base, "stop", f"the round failed ({s.failure}) and the round budget "
                     f"({policy.max_rounds}) is spent")
    if not policy.llm or (s.history and s.history[-1].action == "moves"):
        return None  # nothing repairs it (no coder; a move that fails is dropped): go on
    streak = _repair_streak(s.history)
    if s.failure == "coder" or streak >= policy.max_repairs:
        why = ("the coder produced no usable template" if s.failure == "coder" else
               f"{streak + 1} failed rounds in a row: the design, not the code, is at fault")
        return _with(base, "rewrite", f"{why}; rewrite from the historical best",
                     route="designer", guidance=analysis.guidance(s.diagnosis))
    route = "coder"
    return _with(base, "repair", f"the candidate failed ({s.failure}): send the diagnosis back "
                 "to the coder", route=route, guidance=(s.failure_text,))


def _stop(s: Situation, policy: Policy, base: Decision) -> Decision | None:
    if s.round >= policy.max_rounds:
        return _with(base, "stop", f"the round budget ({policy.max_rounds}) is spent")
    frac = s.best.ceiling_fraction
    if frac is not None and frac >= policy.target_fraction:
        return _with(base, "stop", f"the best runs at {100 * frac:.1f}% of the attainable "
                     f"roofline ({roofline_name(s.best)}; target "
                     f"{100 * policy.target_fraction:.0f}%): little is left to gain",
                     llm_note=_note(s, policy))
    if s.time_left_s is not None and s.round_s is not None and s.time_left_s < s.round_s:
        limit = f" ({policy.max_time_s:.0f} s)" if policy.max_time_s else ""
        return _with(base, "stop", f"the time budget{limit} cannot hold another round: "
                     f"{max(s.time_left_s, 0.0):.0f} s left, and a round takes about "
                     f"{s.round_s:.0f} s (its re-tests and profile, and a search of a few "
                     "points, as measured so far)", llm_note=_note(s, policy))
    idle = _rounds_without_gain(s)
    if idle >= policy.patience and not called_moves(s) and not fallback_moves(s, policy):
        return _with(base, "stop", f"{idle} rounds in a row without a verified, beyond-noise "
                     "improvement", llm_note=_note(s, policy))
    return None


def roofline_name(best: KernelState) -> str:
    """Which ceiling the best's roofline stands on, in words."""
    bound = best.bound_by or MEMORY
    return "bound by the measured copy ceiling" if bound == MEMORY else \
        f"bound by the measured {bound} ceiling"


def _first_tune(s: Situation, base: Decision) -> Decision | None:
    """Round 0: search the kernel's own knobs first, when it has any."""
    if s.round != 0:
        return None
    space = [p for p in s.params if len(p.values) > 1]
    if not space:
        return None
    names = ", ".join(p.name for p in space)
    return _with(base, "tune", f"search the kernel's declared parameters ({names}) inside the "
                 "hardware's limits")


def _far_from_roofline(s: Situation, policy: Policy, base: Decision) -> Decision | None:
    """Knob moves gain percents; a kernel far below the roofline after its knobs were searched
    needs a different structure, which only a rewrite can give."""
    frac = s.best.ceiling_fraction
    if not policy.llm or s.round < 1 or frac is None or frac >= policy.rewrite_below:
        return None
    return _with(base, "rewrite", f"after searching its knobs the best runs at "
                 f"{100 * frac:.1f}% of the attainable roofline ({roofline_name(s.best)}; below "
                 f"{100 * policy.rewrite_below:.0f}%"
                 "): the gap is structural; ask the coder for a rewrite",
                 guidance=analysis.guidance(s.diagnosis), route="designer")


def _retune(s: Situation, policy: Policy, base: Decision) -> Decision | None:
    earlier = [c for d in s.history for c in d.retune]
    tried = {(c.param, c.new) for c in earlier}
    moves = [m for m in retune_moves(s.params, s.best.params, s.diagnosis, s.reach,
                                     ranges.extended(earlier))
             if (m.param, m.new) not in tried]
    if not moves:
        return None
    what = "; ".join(m.why for m in moves)
    return _with(base, "retune", f"re-tune around the best: {what}", retune=tuple(moves))


def _moves(s: Situation, policy: Policy, base: Decision) -> Decision | None:
    called = called_moves(s)
    chosen = _within(called or fallback_moves(s, policy), s.moves, policy.move_points)
    if not chosen:
        return None
    what = "; ".join(f"{c.move} (for {c.finding})" for c in chosen)
    why = "the source moves the profile calls for" if called else (
        "the generic moves not tried yet (no move the findings call for is left, and the best "
        "is below the target)")
    return _with(base, "moves", f"apply {why}: {what}", moves=chosen)


def fallback_moves(s: Situation, policy: Policy) -> tuple[MoveChoice, ...]:
    """Below the target, with no move the findings call for left and no LLM to rewrite: the
    generic moves that fit the best's source and were not tried, in GENERIC_MOVES' order."""
    frac = s.best.ceiling_fraction
    if s.round == 0 or policy.llm or called_moves(s) or \
            (frac is not None and frac >= policy.target_fraction):
        return ()
    tried = {c.move for d in s.history for c in d.moves}
    options = {m.name: m for m in s.moves}
    return tuple(MoveChoice(name, GENERIC, options[name].why) for name in GENERIC_MOVES
                 if name in options and options[name].applies and name not in tried)


def called_moves(s: Situation) -> tuple[MoveChoice, ...]:
    """The untried moves that fit the best's source and that its top findings (those that
    account for a tenth of the time or more) call for, in the findings' order. Where the
    diagnosis finds the best below its roofline, a finding's class also calls for the moves of
    the class it reads as there (BELOW_ROOFLINE_ALSO)."""
    if s.diagnosis is None:
        return ()
    tried = {c.move for d in s.history for c in d.moves}
    below = not s.diagnosis.roofline.at_roofline
    out: dict[str, MoveChoice] = {}
    for f in s.diagnosis.findings[:MOVE_FINDINGS]:
        if f.score < MOVE_MIN_SCORE:
            continue
        also = BELOW_ROOFLINE_ALSO.get(f.bottleneck) if below else None
        for m in s.moves:
            if not m.applies or m.name in tried or m.name in out:
                continue
            if f.bottleneck in m.answers:
                out[m.name] = MoveChoice(m.name, f.bottleneck, m.why)
            elif also in m.answers:
                out[m.name] = MoveChoice(m.name, f.bottleneck, f"{m.why} ({f.bottleneck} "
                                         f"below the roofline reads as {also})")
    return tuple(out.values())


def _within(chosen: tuple[MoveChoice, ...], options: Sequence[MoveOption],
            points: int | None) -> tuple[MoveChoice, ...]:
    """The first moves (the first always) whose knobs together span at most `points`."""
    size = {m.name: m.points for m in options}
    kept: list[MoveChoice] = []
    total = 1
    for c in chosen:
        if kept and points is not None and total * size.get(c.move, 1) > points:
            continue
        kept.append(c)
        total *= size.get(c.move, 1)
    return tuple(kept)


def _rewrite(s: Situation, policy: Policy, base: Decision) -> Decision:
    guidance = analysis.guidance(s.diagnosis)
    top = s.diagnosis.classification if s.diagnosis else "unknown"
    if policy.llm:
        return _with(base, "rewrite", f"the knobs are exhausted and the top bottleneck is "
                     f"{top}: ask the coder for a structural rewrite", guidance=guidance,
                     route="designer")
    alike = refused_alike(s.moves)
    return _with(base, "stop", "no parameter move or source move the profile calls for is "
                 "left, and no LLM is configured for a structural rewrite"
                 + (f" (every source move was refused: {alike})" if alike else ""),
                 llm_note=_note(s, policy, force=True))


def refused_alike(moves: Sequence[MoveOption]) -> str:
    """The one reason every source move was refused for ("" when one fits, or their reasons
    differ): a kernel no move can read says why, not just that nothing was left."""
    reasons = {m.reason for m in moves}
    if len(moves) < 2 or any(m.applies for m in moves) or len(reasons) != 1:
        return ""
    return reasons.pop()


def retune_moves(params: Sequence[Param], best: dict[str, object],
                 diagnosis: Diagnosis | None,
                 reach: Mapping[str, tuple[int, ...]] | None = None,
                 extended: set[tuple[str, str]] | None = None) -> list[RangeChange]:
    """Range moves the best point and the profile support (see the module docstring):
    `reach` the values beyond each knob's range the device and the spec allow (None: not
    known), `extended` the (knob, direction) extensions made already."""
    moves = [m for p in params if (m := ranges.edge_move(
        p, best.get(p.name), None if reach is None else reach.get(p.name, ()),
        extended or set())) is not None]
    bottlenecks = {f.bottleneck for f in diagnosis.findings[:3]} if diagnosis else set()
    has_cap = any(p.flag and "maxrregcount" in p.flag for p in params)
    if "occupancy_registers" in bottlenecks and not has_cap:
        moves.append(RangeChange(REGISTER_CAP, (), REGISTER_CAPS,
                                 "registers limit occupancy: try -maxrregcount caps"))
    return moves


def _rounds_without_gain(s: Situation) -> int:
    """Rounds (after the first search) in a row that brought no accepted candidate; a moves
    round does not count (each move is tried once, so they end by themselves)."""
    if s.accepted or s.round == 0:
        return 0
    decisions = (*s.history, replace(s.history[-1], round=s.round, accepted=s.accepted)) \
        if s.history else ()
    count = 0 if s.history else 1  # (a hand-made situation may come without its history)
    for planned, after in reversed(tuple(zip(decisions, decisions[1:], strict=False))):
        if after.accepted or after.round == 0:
            break
        count += planned.action != "moves"
    return count


def _repair_streak(history: Sequence[Decision]) -> int:
    count = 0
    for d in reversed(history):
        if d.action != "repair":
            break
        count += 1
    return count


def _note(s: Situation, policy: Policy, force: bool = False) -> str:
    if policy.llm and not force:
        return ""
    ideas = analysis.guidance(s.diagnosis)
    if not ideas:
        return ""
    return "With an LLM configured, a rewrite round would try: " + "; ".join(ideas)


def _with(base: Decision, action: str, reason: str, **changes: object) -> Decision:
    return replace(base, action=action, reason=reason, **changes)  # type: ignore[arg-type]


__all__ = ["Bullet", "MoveOption", "Policy", "Situation", "called_moves", "decide",
           "retune_moves"]
