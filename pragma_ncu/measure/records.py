"""Round records: what the conductor reads and writes (measured kernels, decisions) and the
round record that is one entry of a run's trace. Plain data (layer 8, imports nothing of the
package) because the coder, the conductor, the store's readers and the trace all share it.

Everything here is plain data that round-trips through JSON (`to_json` / `from_json`), because
the run store keeps it and `pragma-ncu trace` renders it, possibly long after the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

# Decision.outcome: how the round's candidate compared with the best side by side
ACCEPTED = "accepted"
REJECTED = "rejected"
UNDECIDED = "undecided"  # too noisy to decide: the best stays


@dataclass(frozen=True)
class KernelState:
    """A measured kernel: the historical best, or a round's candidate.

    Times are the interleaved re-test medians at each tuned shape; `failure` is set (and the
    times empty) when the candidate was not verified at every shape.
    """

    round: int
    variant: str  # the variant's name
    variant_key: str
    source_hash: str
    params: dict[str, Any]
    times_us: dict[str, float] = field(default_factory=dict)
    noise_us: dict[str, float] = field(default_factory=dict)
    objective_us: float | None = None  # geometric mean of times_us
    verified: bool = False
    failure: str = ""
    # the attainable roofline's time / the kernel's time, geomean over shapes: the larger of a
    # same-size copy and the FLOPs at the compute ceiling (pragma_ncu.measure.roofline)
    ceiling_fraction: float | None = None
    bound_by: str = ""  # which ceiling sets that roofline: memory, or a compute unit
    intensity: float | None = None  # FLOP per byte at the first tuned shape (with FLOPs)
    flop_rate: float | None = None  # FLOP/s achieved there
    metrics: dict[str, float] = field(default_factory=dict)  # key ncu metrics (see KEY_METRICS)
    registers: int | None = None
    classification: str = ""  # the diagnosis' top bottleneck
    findings: tuple[dict[str, Any], ...] = ()  # bottleneck, title, score, summary, evidence
    profile_path: str = ""
    profile_shape: str = ""
    profiler: str = ""  # what collected the profile: ncu, perf, or cachegrind (simulated)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["findings"] = list(self.findings)
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> KernelState:
        return KernelState(**{**data, "findings": tuple(data.get("findings") or ())})


@dataclass(frozen=True)
class Citation:
    """A compendium entry a decision rests on."""

    metric: str
    entry: str
    title: str
    meaning: str
    source: str = ""


@dataclass(frozen=True)
class Bullet:
    """One line of analysis, with the metric values it cites (name -> value, unit-formatted)."""

    text: str
    values: dict[str, str] = field(default_factory=dict)
    cites: tuple[str, ...] = ()  # compendium entry names


@dataclass(frozen=True)
class RangeChange:
    """A re-tune move on one parameter: the values searched next round, and why."""

    param: str
    old: tuple[Any, ...]
    new: tuple[Any, ...]
    why: str


@dataclass(frozen=True)
class MoveChoice:
    """A source move the conductor asks for, and the finding that called for it."""

    move: str
    finding: str  # the bottleneck class
    why: str


@dataclass(frozen=True)
class MoveTrial:
    """What a round did with one move: searched (its knobs, the winner's values and the
    measured effect), refused (its precondition failed on this source) or dropped (its rewrite
    did not parse, compile or verify)."""

    move: str
    finding: str
    status: str  # searched | refused | dropped
    reason: str = ""  # refused or dropped: why; searched: what it changed
    sites: tuple[str, ...] = ()
    knobs: dict[str, list[Any]] = field(default_factory=dict)  # knob -> values searched
    won: dict[str, Any] = field(default_factory=dict)  # the round's winner's values
    taken: bool = False  # the winner left the move's defaults (the rewrite is in it)
    effect: float | None = None  # best time with its knobs at their defaults / best time
    diff: str = ""  # the source at the winner (or its boldest point) against the base

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> MoveTrial:
        return MoveTrial(**{**data, "sites": tuple(data.get("sites") or ())})


@dataclass(frozen=True)
class Decision:
    """The conductor's verdict after a round: was the candidate accepted, and what next."""

    round: int
    # tune: search the variant's declared knobs; retune: the same source with new ranges;
    # rewrite: a structurally new template from the coder; repair: fix a failed candidate;
    # moves: source moves (pragma_ncu.coder.moves) with their knobs; stop: the run ends (why
    # is in the decision's reason).
    action: str
    reason: str  # one line
    accepted: bool = False  # the candidate replaced the historical best
    acceptance: str = ""  # why it did or did not
    speedup_vs_best: float | None = None  # best objective before / candidate objective
    analysis: tuple[Bullet, ...] = ()
    guidance: tuple[str, ...] = ()  # for the coder (rewrite, repair)
    retune: tuple[RangeChange, ...] = ()
    route: str = ""  # repair: "coder" (implementation error) or "designer" (design error)
    llm_note: str = ""  # with no LLM: what a rewrite would have tried
    citations: tuple[Citation, ...] = ()
    # the side-by-side comparison with the best: ACCEPTED, REJECTED, or UNDECIDED (too noisy
    # to decide: the best stays, and `acceptance` gives the figures); "" when there was none
    # (the baseline, a failed candidate)
    outcome: str = ""
    speedup_interval: tuple[float, float] | None = None  # of speedup_vs_best, 95%
    noise_pct: float | None = None  # the larger noise of the two side-by-side re-tests
    moves: tuple[MoveChoice, ...] = ()  # moves: the source moves to apply, and why
    # a stop below the target: each fix the diagnosis named, and the move that tried it (with
    # its measured effect) or why none could
    fixes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> Decision:
        return Decision(
            **{**data,
               "analysis": tuple(Bullet(b["text"], dict(b.get("values") or {}),
                                        tuple(b.get("cites") or ())) for b in data["analysis"]),
               "guidance": tuple(data.get("guidance") or ()),
               "retune": tuple(RangeChange(c["param"], tuple(c["old"]), tuple(c["new"]), c["why"])
                               for c in data.get("retune") or ()),
               "citations": tuple(Citation(**c) for c in data.get("citations") or ()),
               "speedup_interval": (tuple(data["speedup_interval"])
                                    if data.get("speedup_interval") else None),
               "moves": tuple(MoveChoice(**c) for c in data.get("moves") or ()),
               "fixes": tuple(data.get("fixes") or ())})


@dataclass(frozen=True)
class LLMCall:
    """One request to the LLM (all its retries), for the trace: never the key, never the URL's
    credentials."""

    role: str  # "coder"
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: int
    outcome: str  # "ok" or why the reply was refused / no answer came


@dataclass(frozen=True)
class RoundRecord:
    """One round of a run, as the trace shows it."""

    round: int
    action: str  # what this round did (the previous decision's action; "baseline" for round 0)
    variant: dict[str, Any]  # Variant.to_json()
    space: dict[str, list[Any]]  # parameter -> values searched
    search: dict[str, Any]  # strategy, evaluated, verified, pruned, failed, wall_s
    best_before: KernelState | None  # the historical best entering the round (None in round 0)
    candidate: KernelState | None  # the round's best verified instance (None: none verified)
    best_after: KernelState | None
    decision: Decision
    llm_calls: tuple[LLMCall, ...] = ()
    coder_error: str = ""  # the coder produced no usable variant: why
    wall_s: float = 0.0
    moves: tuple[MoveTrial, ...] = ()  # a moves round: what became of each move
    # seconds per phase: search, retest (the search's), side_by_side, profile; the baseline's
    # retest, check and profile (pragma_ncu.loop.budget reads them to plan the run's time)
    phases: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.round, "action": self.action, "variant": self.variant,
            "space": self.space, "search": self.search,
            "best_before": self.best_before.to_json() if self.best_before else None,
            "candidate": self.candidate.to_json() if self.candidate else None,
            "best_after": self.best_after.to_json() if self.best_after else None,
            "decision": self.decision.to_json(),
            "llm_calls": [asdict(c) for c in self.llm_calls],
            "coder_error": self.coder_error, "wall_s": self.wall_s,
            "moves": [m.to_json() for m in self.moves], "phases": self.phases,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> RoundRecord:
        def state(value: dict[str, Any] | None) -> KernelState | None:
            return KernelState.from_json(value) if value else None

        return RoundRecord(
            round=data["round"], action=data["action"], variant=data["variant"],
            space=data["space"], search=data["search"], best_before=state(data["best_before"]),
            candidate=state(data["candidate"]), best_after=state(data["best_after"]),
            decision=Decision.from_json(data["decision"]),
            llm_calls=tuple(LLMCall(**c) for c in data.get("llm_calls") or ()),
            coder_error=data.get("coder_error", ""), wall_s=data.get("wall_s", 0.0),
            moves=tuple(MoveTrial.from_json(m) for m in data.get("moves") or ()),
            phases=dict(data.get("phases") or {}))


def verdict_word(decision: Decision, yes: str = "yes", no: str = "",
                 undecided: str = "undecided") -> str:
    """A round's acceptance in words: accepted, not, or undecided (too noisy to tell)."""
    if decision.accepted:
        return yes
    return undecided if decision.outcome == UNDECIDED else no


def too_noisy(records: Sequence[RoundRecord]) -> dict[str, Any]:
    """The rounds whose candidate the side-by-side re-test could not tell from the best, and
    the last one's figures in words ("" when none): what a run's summary and trace say."""
    undecided = [r for r in records if r.decision.outcome == UNDECIDED]
    last = undecided[-1] if undecided else None
    return {"undecided_rounds": [r.round for r in undecided],
            "too_noisy": f"round {last.round} was {last.decision.acceptance}" if last else ""}
