"""What the conductor decides from: its policy (the run's limits and what is configured) and the
situation after a round (the best, the candidate, the comparison, the diagnosis, the moves and
the time left). `rules.decide` reads them; `analysis` writes the bullets that justify it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.measure.records import Decision, KernelState, MoveTrial
from pragma_ncu.spec.model import Param


@dataclass(frozen=True)
class Policy:
    max_rounds: int = 5  # rounds after the baseline
    target_fraction: float = 0.90  # stop within 10% of the attainable roofline
    patience: int = 2  # rounds without an accepted candidate before stopping
    llm: bool = False  # a coder LLM is configured
    max_repairs: int = 2  # consecutive repairs before escalating to a rewrite
    rewrite_below: float = 0.70  # with an LLM: below this fraction of the roofline after a
    # search of the kernel's own knobs, the gap is structural: rewrite rather than re-tune
    move_points: int | None = None  # the most points a moves round's knobs may span (the
    # search budget): moves beyond it wait for a later round (so exhaustive search still fits)
    max_time_s: float | None = None  # the whole run's time budget (None: no limit)


@dataclass(frozen=True)
class MoveOption:
    """A source move as the conductor sees it: the classes that call for it, and whether it
    fits the best's source (why not, when it does not)."""

    name: str
    answers: tuple[str, ...]
    why: str
    applies: bool
    reason: str = ""
    points: int = 1  # the values its knobs span together


@dataclass(frozen=True)
class Situation:
    """What the conductor sees after round `round`."""

    round: int
    best: KernelState  # the historical best after this round's acceptance
    best_before: KernelState | None  # before it (None in round 0)
    candidate: KernelState | None  # None: no verified instance (see failure)
    accepted: bool
    acceptance: str
    speedup: float | None
    diagnosis: Diagnosis | None  # of the best's profile
    params: tuple[Param, ...]  # the best variant's declared parameters
    failure: str = ""  # "", "build", "verification", "coder", "spec"
    failure_text: str = ""
    history: tuple[Decision, ...] = ()  # earlier decisions, oldest first
    outcome: str = ""  # the comparison's: "accepted", "rejected", "undecided" (accept.py)
    interval: tuple[float, float] | None = None  # the speedup's confidence interval
    noise_pct: float | None = None
    moves: tuple[MoveOption, ...] = ()  # the source moves, read against the best's source
    trials: tuple[MoveTrial, ...] = ()  # what became of every move tried so far, this round's
    # the values beyond each power-of-two knob's range that the device and the spec allow
    # (conductor.ranges.reach); None: not known, every power of two is proposed
    reach: Mapping[str, tuple[int, ...]] | None = None
    time_left_s: float | None = None  # of the run's time budget (None: no limit)
    round_s: float | None = None  # what another round is expected to cost (loop.budget)
