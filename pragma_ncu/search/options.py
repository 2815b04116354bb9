"""How a search runs: its strategy, budget, re-test rounds and top-k, seed, parallel compiles
and the phases' timing (`autotune.tune_parameters` and `per_shape` read it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pragma_ncu.search import strategies
from pragma_ncu.search.evaluator import Phases
from pragma_ncu.search.results import Budget


@dataclass(frozen=True)
class SearchOptions:
    strategy: str = "auto"  # one of strategies.choices()
    budget: Budget = field(default_factory=lambda: Budget(evaluations=200, seconds=None))
    top_k: int = 5
    rounds: int = 2  # interleaved re-test rounds (more, up to 4x, while a verdict is undecided)
    seed: int = 0
    jobs: int = 1  # parallel compiles
    phases: Phases | None = None  # None: the target's own (GPU and CPU time differently)

    def __post_init__(self) -> None:
        strategies.check(self.strategy)  # an unknown name fails before any worker starts
