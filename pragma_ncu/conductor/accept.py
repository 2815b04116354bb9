"""When a candidate replaces the historical best.

Two rules, and nothing else: the candidate must be verified at every shape (tuned and checked),
and it must be faster than the best, measured side by side in interleaved rounds, by the rule
of `search.compare` (the interval of the ratio of their times lies wholly below 1 - 1%). A
candidate that rule cannot tell from the best, even after more rounds, is not an improvement
either: the best stays, and the acceptance says the comparison was too noisy to decide.
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.measure.records import ACCEPTED, REJECTED, UNDECIDED
from pragma_ncu.search.results import Retest, Verdict
from pragma_ncu.search.retest import decide

__all__ = ["ACCEPTED", "REJECTED", "UNDECIDED", "Acceptance", "accept", "judge"]


@dataclass(frozen=True)
class Acceptance:
    accepted: bool
    reason: str
    speedup: float | None  # best objective / candidate objective, when both were measured
    outcome: str = ""  # ACCEPTED, REJECTED or UNDECIDED ("": nothing was compared)
    interval: tuple[float, float] | None = None  # the speedup's confidence interval
    noise_pct: float | None = None  # the larger noise of the two side-by-side re-tests


def judge(retests: list[Retest]) -> list[Verdict]:
    """The verdict `accept` rests on, for `side_by_side` to measure more while undecided:
    the best and the candidate, in that order."""
    return [decide(retests)]


def accept(best: Retest, candidate: Retest | None, verified_everywhere: bool) -> Acceptance:
    """Does `candidate` replace `best`? Both re-tested together (`best.is_incumbent` set)."""
    if candidate is None:
        return Acceptance(False, "no candidate was verified", None)
    if not verified_everywhere:
        return Acceptance(False, "the candidate failed verification at some shape", None)
    if candidate.status != "ok":
        return Acceptance(False, f"the candidate failed the side-by-side re-test "
                                 f"({candidate.status}: {candidate.message})", None)
    if best.status != "ok" or best.objective is None:
        # the best no longer verifies (a flaky kernel?): the verified candidate takes over
        return Acceptance(True, f"the historical best failed its re-test ({best.status}); the "
                                "verified candidate replaces it", None, ACCEPTED)
    verdict = decide([best, candidate])
    speedup = (best.objective / candidate.objective
               if candidate.objective else None)
    if verdict.winner is not candidate:
        return Acceptance(False, "the historical best is still the fastest", speedup, REJECTED)
    return _compared(verdict, speedup)


def _compared(verdict: Verdict, speedup: float | None) -> Acceptance:
    won = verdict.accepted
    reason = verdict.reason.replace("the incumbent", "the historical best")
    outcome = ACCEPTED if won else (UNDECIDED if verdict.undecided else REJECTED)
    found = verdict.comparison
    if found is None:
        return Acceptance(won, reason, speedup, outcome)
    interval = (found.low, found.high) if found.low is not None and found.high is not None \
        else None
    return Acceptance(won, reason, speedup, outcome, interval, found.noise_pct)
