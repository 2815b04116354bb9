"""What a tune run works with: its plan (made from the user's options), what stays fixed for
the run (`Context`), what changes from round to round (`State`), and the spec each variant is
built with (`spec_of`). The rounds (`rounds`) and the source moves' side of the loop (`moves`)
both read these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pragma_ncu.backends.base import Session
from pragma_ncu.coder.llm_coder import LLMCoder
from pragma_ncu.coder.variant import Variant, variant_spec
from pragma_ncu.conductor.situation import Policy
from pragma_ncu.diagnose.cite import Knowledge
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.infra.progress import Notice, Progress
from pragma_ncu.infra.store import Store
from pragma_ncu.measure.records import Decision, KernelState, RoundRecord
from pragma_ncu.search.evaluator import Evaluator
from pragma_ncu.search.options import SearchOptions
from pragma_ncu.spec.model import Shape, TaskSpec


@dataclass(frozen=True)
class RunPlan:
    """What the loop runs by, made from the user's `api.TuneOptions` (its `plan`): the shapes
    timed, the conductor's policy, the search's options, the re-test's rounds, the time."""

    tuned: tuple[str, ...]  # shapes timed; the spec's others are verified only
    policy: Policy = field(default_factory=Policy)
    search: SearchOptions = field(default_factory=SearchOptions)
    side_rounds: int = 3  # interleaved rounds of the best-vs-candidate re-test (up to 4x
    # that while the acceptance rule cannot tell the two apart)
    max_time_s: float | None = None  # the whole run's time budget (None: no limit)


@dataclass(frozen=True)
class Context:
    """What stays fixed for a run."""

    spec: TaskSpec  # the user's spec (the original variant's)
    base: dict[str, Any]  # the user's spec tables, for variants' overlays
    spec_text: str
    backend: Session  # the target's session (or, in tests, a simulated one)
    knowledge: Knowledge
    store: Store
    run_id: str
    run_dir: Path
    options: RunPlan
    coder: LLMCoder | None = None
    llm_label: str = "none"  # model@endpoint, never the key
    notice: Notice = lambda _: None
    progress: Progress | None = None  # each search and re-test as phases (None: lines only)
    started: float | None = None  # the session's clock when the run began (None: when the
    # loop starts); the time budget counts from there

    @property
    def tuned_shapes(self) -> tuple[Shape, ...]:
        return tuple(self.spec.shape_named(n) for n in self.options.tuned)

    @property
    def check_shapes(self) -> tuple[Shape, ...]:
        return tuple(s for s in self.spec.shapes if s.name not in self.options.tuned)


@dataclass
class State:
    """What changes from round to round."""

    best: KernelState
    best_variant: Variant
    diagnosis: Diagnosis | None
    records: list[RoundRecord]
    evaluators: dict[str, tuple[TaskSpec, Evaluator]] = field(default_factory=dict)
    spent_before_s: float = 0.0  # a resumed run: what its finished rounds took before

    def time_left(self, ctx: Context) -> float | None:
        """Seconds left of the run's time budget (None: no limit)."""
        limit = ctx.options.max_time_s
        if limit is None:
            return None
        started = ctx.started if ctx.started is not None else ctx.backend.clock()
        return limit - (ctx.backend.clock() - started + self.spent_before_s)

    @property
    def history(self) -> tuple[Decision, ...]:
        return tuple(r.decision for r in self.records)

    @property
    def llm_dropped(self) -> bool:
        """Whether the LLM's endpoint could not be reached in an earlier round: the run goes
        on without it (a resumed run too: its records say so)."""
        return any(r.llm_dropped for r in self.records)


def policy_of(ctx: Context, st: State) -> Policy:
    """The conductor's policy for the next decision: the run's, without the LLM once its
    endpoint could not be reached."""
    policy = ctx.options.policy
    return replace(policy, llm=False) if st.llm_dropped and policy.llm else policy


def spec_of(ctx: Context, variant: Variant) -> TaskSpec:
    """The spec a variant is built and checked with (the user's own for the original)."""
    return variant_specs(ctx.spec, ctx.base, ctx.run_dir / "variants")(variant)


def variant_specs(spec: TaskSpec, tables: dict[str, Any],
                  workdir: Path) -> Callable[[Variant], TaskSpec]:
    """The spec of each variant of `spec` (whose TOML tables are `tables`): the user's own for
    the original, else the variant's overlay laid over the tables, its source written under
    `workdir`. A run's variants go under its folder (`spec_of`); `pragma-ncu moves` has no run
    and writes its variants to a folder of its own."""
    def of(variant: Variant) -> TaskSpec:
        if variant.origin == "original" and not variant.overlay:
            return spec
        made = variant_spec(tables, variant, spec.spec_path, workdir)
        # an overlay never changes the reference: keep the user's (a spec built in Python
        # imports its reference function from a folder of its own, not from the spec's)
        return replace(made, reference=spec.reference)
    return of
