"""The tune loop: round 0 measures and profiles the original; each later round gets a variant
from the coder (its own knobs, new ranges, or an LLM's template), searches its parameters,
re-tests the winner side by side with the historical best, profiles it, and lets the conductor
decide what comes next. Every round is stored whole when it ends, so an interrupted run resumes
at the round it was in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pragma_ncu.backends import diagnose
from pragma_ncu.backends.base import Session
from pragma_ncu.coder.knobs import retuned
from pragma_ncu.coder.llm_coder import CoderRequest
from pragma_ncu.coder.moves.assemble import base_of, base_variant, is_moves
from pragma_ncu.coder.variant import Variant, original_variant, variant_spec
from pragma_ncu.conductor import ranges
from pragma_ncu.conductor.accept import Acceptance, accept, judge
from pragma_ncu.conductor.rules import decide
from pragma_ncu.conductor.situation import MoveOption, Situation
from pragma_ncu.conductor.state import kernel_state, with_profile
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.infra.errors import KernelFailure, KernelNotFound, PragmaError
from pragma_ncu.loop import budget, moves
from pragma_ncu.loop.context import Context, State, policy_of, spec_of
from pragma_ncu.loop.moves import MovePlan
from pragma_ncu.loop.side_by_side import (
    Entrant,
    check_everywhere,
    evaluation_row,
    failure_summary,
    side_by_side,
)
from pragma_ncu.measure.records import (
    Decision,
    KernelState,
    LLMCall,
    MoveTrial,
    RoundRecord,
    verdict_word,
)
from pragma_ncu.search.autotune import tune_parameters
from pragma_ncu.search.evaluator import Evaluator
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.search.results import Evaluation, Retest, SearchResult
from pragma_ncu.search.retest import Rounds
from pragma_ncu.search.serial import Problem
from pragma_ncu.search.space import Point, Space
from pragma_ncu.spec.model import TaskSpec


class TuneError(KernelFailure):
    """The run cannot start or go on (e.g. the original kernel fails verification)."""


@dataclass(frozen=True)
class Plan:
    action: str
    variant: Variant | None = None  # tune, retune, moves
    request: CoderRequest | None = None  # rewrite, repair
    moves: MovePlan | None = None  # moves: what became of each move before the search


def run(ctx: Context, state: State | None = None) -> State:
    """Run (or, given the state of a resumed run, go on with) the loop until the conductor
    says stop."""
    if ctx.started is None:
        ctx = replace(ctx, started=ctx.backend.clock())
    if state is None:
        state = baseline(ctx)
    plan = next_plan(ctx, state)
    while plan is not None:
        number = len(state.records)
        ctx.notice(f"round {number}/{ctx.options.policy.max_rounds}: {plan.action}"
                   + (f" ({plan.variant.name})" if plan.variant else ""))
        state = run_round(ctx, state, number, plan)
        plan = next_plan(ctx, state)
    return state


def variant_checker(spec: TaskSpec, base: dict[str, Any], run_dir: Path,
                    backend: Session) -> Callable[[Variant], str | None]:
    """The coder's check of a reply: the variant's spec parses and it compiles at its
    defaults; None when fine, else the error to feed back."""
    def check(variant: Variant) -> str | None:
        try:
            vspec = variant_spec(base, variant, spec.spec_path, run_dir / "variants")
        except PragmaError as exc:
            return str(exc)
        return backend.check(vspec)
    return check


def baseline(ctx: Context) -> State:
    """Round 0: the original kernel at its defaults, verified everywhere, re-tested, profiled."""
    ctx.store.begin_round(ctx.run_id, 0)
    ctx.notice("round 0: building, verifying and timing the original kernel")
    variant = original_variant(ctx.spec)
    spec, evaluator = _evaluator(ctx, {}, variant)
    point = dict(spec.default_params())
    start = ctx.backend.clock()
    built = evaluator.build(point)
    if built.status == "kernel_not_found":  # the spec's mistake, in the early check's words
        raise KernelNotFound(spec.kernel_name, spec.source_path.name, built.entries)
    if not built.ok:
        raise TuneError(f"the original kernel does not build: {built.problem}")
    entrant = Entrant(evaluator, point, built, is_best=True)
    phases: dict[str, float] = {}
    with budget.phase(ctx.backend.clock, phases, "retest"):
        retest = _baseline_retest(ctx, entrant)
    with budget.phase(ctx.backend.clock, phases, "check"):
        wrong = retest.message if retest.status != "ok" else check_everywhere(
            entrant, ctx.check_shapes)
    if wrong:
        raise TuneError(f"the original kernel fails verification ({wrong}); tune needs a "
                        "correct starting point")
    state0 = kernel_state(0, variant.name, variant.key, variant.source_hash, retest,
                          verified=True, registers=_registers(entrant.built),
                          compute=ctx.backend.compute)
    with budget.phase(ctx.backend.clock, phases, "profile"):
        best, diagnosis = _profiled(ctx, state0, spec, point, 0)
    _store_point(ctx, 0, variant, point, best)
    record = RoundRecord(0, "baseline", variant.to_json(), _space(spec), {}, None, best, best,
                         Decision(0, "", ""), wall_s=ctx.backend.clock() - start,
                         phases=phases)
    first = State(best, variant, diagnosis, [], {variant.key: (spec, evaluator)})
    situation = Situation(0, best, None, None, False, "the baseline", None, diagnosis,
                          spec.params, moves=_move_options(ctx, variant, best, diagnosis),
                          reach=_reach(ctx, spec, best))
    decision = decide(_timed(situation, ctx, first, [record]), ctx.options.policy,
                      ctx.knowledge)
    record = replace(record, decision=decision)
    ctx.store.close_round(ctx.run_id, 0, decision.action, record.to_json())
    ctx.notice(f"baseline {best.objective_us:.2f} µs; next: {decision.action} — "
               f"{decision.reason}")
    return replace(first, records=[record])


def _baseline_retest(ctx: Context, entrant: Entrant) -> Retest:
    """The original re-tested: `side_rounds` interleaved rounds, fewer for a long launch
    (the first round says how long)."""
    together = Rounds([entrant], ctx.tuned_shapes)
    together.run(1)
    (first,) = together.retests()
    more = budget.retest_rounds(ctx.options.side_rounds, first.objective) - 1
    if first.status == "ok" and more > 0:
        together.run(more)
    return together.retests()[0]


def _timed(situation: Situation, ctx: Context, st: State,
           records: list[RoundRecord]) -> Situation:
    """The situation with what the conductor weighs of the run's time: the seconds left of
    its budget, and what another round is expected to cost (loop.budget)."""
    left = st.time_left(ctx)
    cost = budget.round_cost(records, ctx.options.search, ctx.options.side_rounds)
    if left is None or cost is None:
        return situation
    return replace(situation, time_left_s=left, round_s=cost.least_s)


def run_round(ctx: Context, st: State, number: int, plan: Plan) -> State:
    ctx.store.begin_round(ctx.run_id, number)
    start = ctx.backend.clock()
    variant, calls, coder_error, unreachable = _variant(ctx, st, plan, number)
    dropped = _dropped(ctx, unreachable, number) if unreachable else ""
    if dropped:
        ctx.notice(dropped)
    outcome = _try_variant(ctx, st, number, variant) if variant else _Outcome(
        failure="moves" if plan.moves is not None else "coder", failure_text=coder_error)
    best_after, diagnosis, best_variant = st.best, st.diagnosis, st.best_variant
    if outcome.acceptance.accepted and outcome.candidate is not None and variant is not None:
        best_after, diagnosis, best_variant = outcome.candidate, outcome.diagnosis, variant
    got = outcome.acceptance
    trials: tuple[MoveTrial, ...] = ()
    if plan.moves is not None:
        trials = moves.measured(plan.moves, st.history[-1], outcome.evaluations, outcome.winner)
    record = RoundRecord(
        number, plan.action, variant.to_json() if variant else {"name": "(none)"},
        outcome.space, outcome.search, outcome.best_before or st.best, outcome.candidate,
        best_after, Decision(number, "", ""), calls, coder_error,
        ctx.backend.clock() - start, moves=trials, phases=outcome.phases, llm_dropped=dropped)
    best_spec = _spec_of_best(ctx, st, best_after, variant)
    situation = Situation(
        number, best_after, outcome.best_before or st.best, outcome.candidate, got.accepted,
        got.reason, got.speedup, diagnosis, best_spec.params, outcome.failure,
        outcome.failure_text, st.history, got.outcome, got.interval, got.noise_pct,
        moves=_move_options(ctx, best_variant, best_after, diagnosis),
        trials=(*(t for r in st.records for t in r.moves), *trials),
        reach=_reach(ctx, best_spec, best_after))
    policy = replace(ctx.options.policy, llm=False) if dropped else policy_of(ctx, st)
    record = replace(record, decision=decide(_timed(situation, ctx, st, [*st.records, record]),
                                             policy, ctx.knowledge))
    decision = record.decision
    ctx.store.close_round(ctx.run_id, number, decision.action, record.to_json())
    _announce(ctx, record)
    if best_after is not st.best and variant is not None:
        st = replace(st, best=best_after, best_variant=variant, diagnosis=diagnosis)
    return replace(st, records=[*st.records, record])


@dataclass(frozen=True)
class _Outcome:
    candidate: KernelState | None = None
    best_before: KernelState | None = None
    acceptance: Acceptance = Acceptance(False, "no candidate", None)
    diagnosis: Diagnosis | None = None
    failure: str = ""
    failure_text: str = ""
    space: dict[str, list[Any]] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)
    evaluations: tuple[Evaluation, ...] = ()
    winner: dict[str, Any] | None = None
    phases: dict[str, float] = field(default_factory=dict)  # seconds: search, retest, ...


def _move_options(ctx: Context, variant: Variant, best: KernelState,
                  diagnosis: Diagnosis | None) -> tuple[MoveOption, ...]:
    return moves.options(ctx, variant, best, diagnosis)


def _try_variant(ctx: Context, st: State, number: int, variant: Variant) -> _Outcome:
    try:
        spec, evaluator = _evaluator(ctx, st.evaluators, variant)
    except PragmaError as exc:
        return _Outcome(failure="spec", failure_text=str(exc))
    problem = Problem(spec, ctx.tuned_shapes, Space.from_spec(spec), {}, ctx.check_shapes)
    result = tune_parameters(problem, evaluator, _search_options(ctx, st, number),
                             clock=ctx.backend.clock, notice=ctx.notice, progress=ctx.progress)
    for e in result.evaluations:
        _store_evaluation(ctx, number, variant, e)
    space, search = _space(spec), _search_summary(result)
    phases = {"search": round(result.stats.search_s, 3),
              "retest": round(result.stats.retest_s, 3)}
    winner = result.general.winner
    if winner is None or winner.status != "ok":
        kind, text = failure_summary(result.evaluations)
        return _Outcome(failure=kind, failure_text=text, space=space, search=search,
                        evaluations=result.evaluations, phases=phases)
    outcome = _compare(ctx, st, number, variant, spec, evaluator, winner, result, space, search,
                       phases)
    return replace(outcome, evaluations=result.evaluations, winner=dict(winner.point))


def _search_options(ctx: Context, st: State, number: int) -> SearchOptions:
    """The round's search: its share of the run's time, fewer re-tested candidates for a
    long launch (loop.budget)."""
    left = st.time_left(ctx)
    cost = budget.round_cost(st.records, ctx.options.search, ctx.options.side_rounds)
    chosen = budget.search_options(ctx.options.search, left, cost,
                                   number >= ctx.options.policy.max_rounds,
                                   st.best.objective_us)
    if chosen.budget != ctx.options.search.budget and left is not None:
        seconds = f"{chosen.budget.seconds:.0f} s" if chosen.budget.seconds else "no limit"
        ctx.notice(f"time: {max(left, 0):.0f} s left of {ctx.options.max_time_s:.0f} s; this "
                   f"search may take {seconds} and {chosen.budget.evaluations} points")
    return chosen


def _compare(ctx: Context, st: State, number: int, variant: Variant, spec: TaskSpec,
             evaluator: Evaluator, winner: Retest, result: SearchResult,
             space: dict[str, list[Any]], search: dict[str, Any],
             phases: dict[str, float]) -> _Outcome:
    _, best_eval = _evaluator(ctx, st.evaluators, st.best_variant)
    best_point = dict(st.best.params)
    cand = Entrant(evaluator, dict(winner.point), evaluator.build(dict(winner.point)))
    best = Entrant(best_eval, best_point, best_eval.build(best_point), is_best=True)
    ctx.notice("side by side with the historical best")
    rounds = budget.retest_rounds(ctx.options.side_rounds, st.best.objective_us)
    with budget.phase(ctx.backend.clock, phases, "side_by_side"):
        best_rt, cand_rt = side_by_side([best, cand], ctx.tuned_shapes, rounds, judge,
                                        ctx.notice, ctx.progress)
    verified = _verified_everywhere(result.evaluations, winner.point)
    acceptance = accept(best_rt, cand_rt, verified)
    before = _refreshed(st.best, best_rt)
    state = kernel_state(number, variant.name, variant.key, variant.source_hash, cand_rt,
                         verified=verified, registers=_registers(cand.built),
                         compute=ctx.backend.compute)
    diagnosis = None
    if state.verified:
        with budget.phase(ctx.backend.clock, phases, "profile"):
            state, diagnosis = _profiled(ctx, state, spec, cand.point, number)
    return _Outcome(state, before, acceptance, diagnosis, "" if state.verified else
                    "verification", state.failure, space, search, phases=phases)


def _variant(ctx: Context, st: State, plan: Plan, number: int
             ) -> tuple[Variant | None, tuple[LLMCall, ...], str, str]:
    """The round's variant, the LLM requests it took, why there is none, and why the LLM's
    endpoint could not be reached ("" when it could, or was not asked)."""
    if plan.variant is not None:
        return plan.variant, (), "", ""
    if plan.moves is not None:  # said now: a round with no variant ends with no candidate
        ctx.notice(plan.moves.failure)
        return None, (), plan.moves.failure, ""
    if st.llm_dropped:
        return None, (), "the LLM's endpoint could not be reached in an earlier round", ""
    if ctx.coder is None or plan.request is None:
        return None, (), "no coder is configured", ""
    ctx.notice(f"asking the coder for a {plan.action}")
    result = ctx.coder.propose(plan.request, f"llm {plan.action} {number}")
    return result.variant, result.calls, result.error, result.unreachable


def _dropped(ctx: Context, error: str, number: int) -> str:
    """The warning of a round whose LLM endpoint could not be reached: said once, kept in the
    round's record and the run's summary."""
    config = ctx.coder.client.config if ctx.coder is not None else None
    where = urlsplit(config.base_url) if config and config.base_url else None
    url = (f"{where.scheme}://{where.hostname}{f':{where.port}' if where.port else ''}"
           f"{where.path}" if where is not None else "(the client's default endpoint)")
    return (f"the LLM endpoint {url} is unreachable ({error}): from round {number} on, the "
            "run goes on without the LLM")


def next_plan(ctx: Context, st: State) -> Plan | None:
    """What the last decision asks for, as a concrete variant or coder request."""
    last = st.records[-1]
    d = last.decision
    if d.action == "stop":
        return None
    if d.action == "tune":
        return Plan("tune", st.best_variant)
    if d.action == "moves":
        planned = moves.plan(ctx, st.best_variant, st.best, st.diagnosis, d, len(st.records))
        return Plan("moves", planned.variant, moves=planned)
    if d.action == "retune":
        spec, _ = _evaluator(ctx, st.evaluators, st.best_variant)
        name = f"retune {len(st.records)}"
        return Plan("retune", retuned(st.best_variant, spec.params, dict(st.best.params),
                                      [(c.param, c.new) for c in d.retune], name, d.reason))
    current = _plain(ctx, st.best_variant, st.best)
    diagnosis = ""
    if d.action == "repair" and last.variant.get("source"):
        current, diagnosis = Variant.from_json(last.variant), "\n".join(d.guidance)
    return Plan(d.action, request=_coder_request(ctx, st, d, current, diagnosis))


def _plain(ctx: Context, variant: Variant, best: KernelState) -> Variant:
    """What the coder is shown of a variant: a moves template as the plain source it is at
    the best's point (the moves' knobs baked in), anything else as it is."""
    if not is_moves(variant):
        return variant
    base = base_of(variant, spec_of(ctx, variant), dict(best.params))
    return replace(base_variant(base, variant.name), origin=variant.origin, note=variant.note)


def _coder_request(ctx: Context, st: State, d: Decision, current: Variant,
                   diagnosis: str) -> CoderRequest:
    best = st.best
    profile = {"classification": best.classification, "metrics": best.metrics,
               "findings": [{k: f[k] for k in ("bottleneck", "title", "summary")}
                            for f in best.findings]}
    return CoderRequest(
        kind=d.action, kernel_name=ctx.spec.kernel_name, spec_text=ctx.spec_text,
        current=current, current_params=dict(best.params), diagnosis=diagnosis,
        guidance=d.guidance, compendium=d.citations, profile=profile, best=best,
        best_source=_plain(ctx, st.best_variant, best).source, target=ctx.spec.target,
        moves_tried=moves.tried_lines(st.records))


def _evaluator(ctx: Context, cache: dict[str, tuple[TaskSpec, Evaluator]],
               variant: Variant) -> tuple[TaskSpec, Evaluator]:
    if variant.key not in cache:
        spec = spec_of(ctx, variant)
        cache[variant.key] = (spec, ctx.backend.evaluator(spec))
    return cache[variant.key]


def _profiled(ctx: Context, state: KernelState, spec: TaskSpec, point: Point,
              number: int) -> tuple[KernelState, Diagnosis | None]:
    shape = ctx.tuned_shapes[0]
    ctx.notice(f"profiling at {shape.name}")
    got = ctx.backend.profile(spec, point, shape, ctx.run_dir / "profiles" / f"round-{number}")
    if got.kernel is None:
        ctx.notice(f"no profile: {got.problem}")
        return state, None
    diagnosis = diagnose(got.kernel, ctx.knowledge, ctx.backend.ceiling_gbps,
                         str(spec.source_path.resolve()), got.resources,
                         ctx.backend.compute_ceilings, collector=got.collector)
    moved = spec.resolve(shape, dict(point)).bytes_moved if spec.bytes_expr is None else None
    return (with_profile(state, got.kernel, diagnosis, got.path, shape.name, got.profiler,
                         moved), diagnosis)


def _spec_of_best(ctx: Context, st: State, best: KernelState,
                  variant: Variant | None) -> TaskSpec:
    chosen = variant if best is not st.best and variant is not None else st.best_variant
    spec, _ = _evaluator(ctx, st.evaluators, chosen)
    return spec


def _reach(ctx: Context, spec: TaskSpec, best: KernelState) -> dict[str, tuple[int, ...]]:
    """How far each power-of-two knob of the best may go beyond its range: what the device's
    limits and the spec's restrictions allow at every shape, the others at the best's values."""
    return ranges.reach(spec, dict(best.params), (*ctx.tuned_shapes, *ctx.check_shapes),
                        ctx.backend.limits)


def _verified_everywhere(evaluations: tuple[Evaluation, ...], point: Point) -> bool:
    ev = next((e for e in evaluations if dict(e.point) == dict(point)), None)
    return ev is not None and ev.ok


def _refreshed(best: KernelState, rt: Retest) -> KernelState:
    """The historical best with this round's side-by-side times (what the candidate met)."""
    if rt.status != "ok":
        return replace(best, failure=f"re-test: {rt.status}: {rt.message}")
    return replace(best, times_us={s.shape: s.median_us for s in rt.shapes},
                   noise_us={s.shape: s.noise_us for s in rt.shapes},
                   objective_us=rt.objective)


def _registers(built: Any) -> int | None:
    return built.resources.registers if built.resources is not None else None


def _space(spec: TaskSpec) -> dict[str, list[Any]]:
    return {p.name: list(p.values) for p in spec.params if p.values}


def _search_summary(r: SearchResult) -> dict[str, Any]:
    s = r.stats
    summary = {"strategy": r.strategy, "space": s.space_size, "evaluated": s.evaluated,
               "verified": s.verified, "pruned": s.pruned, "failed": s.failed,
               "wall_s": round(s.wall_s, 2), "winner_vs_default": r.general.reason}
    if r.workers:  # many workers: each one's share, and the one that re-tested
        summary["points_per_s"] = round(r.points_per_s or 0.0, 2)
        summary["workers"] = {w.label: w.evaluated for w in r.workers}
        summary["retested_on"] = r.retest_device.label if r.retest_device else None
    if r.calibration is not None:  # each GPU's time over the others', and who was left out
        relative = {label: round(ratio, 3) for label, ratio in r.calibration.relative}
        summary["calibration"] = {"relative": relative, "excluded": list(r.calibration.excluded)}
    return summary


def _store_evaluation(ctx: Context, number: int, variant: Variant, e: Evaluation) -> None:
    row = evaluation_row(e)
    ctx.store.add_candidate(ctx.run_id, number, variant.source, dict(e.point), e.status,
                            e.objective, row["build"], row["measurements"])


def _store_point(ctx: Context, number: int, variant: Variant, point: Point,
                 state: KernelState) -> None:
    summary = {"classification": state.classification, "metrics": state.metrics}
    ctx.store.add_candidate(ctx.run_id, number, variant.source, dict(point), "ok",
                            state.objective_us, {"registers": state.registers},
                            [{"shape": k, "median_us": v} for k, v in state.times_us.items()],
                            summary, state.profile_path)


def _announce(ctx: Context, r: RoundRecord) -> None:
    c, d = r.candidate, r.decision
    got = (f"candidate {c.objective_us:.2f} µs" if c is not None and c.objective_us
           else "no verified candidate")
    best = r.best_after.objective_us if r.best_after else None
    verdict = verdict_word(d, "accepted", "not accepted", "undecided (too noisy)")
    ctx.notice(f"round {r.round}: {got}; {verdict}; "
               f"best {best:.2f} µs; next: {d.action} — {d.reason}" if best else
               f"round {r.round}: {got}; next: {d.action} — {d.reason}")
