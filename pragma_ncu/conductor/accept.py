"""When a candidate replaces the historical best.

Two rules, and nothing else: the candidate must be verified at every shape (tuned and checked),
and it must be faster than the best, measured side by side in interleaved rounds, by more than
the larger noise of the two. A candidate within noise is not an improvement, whatever its median.
"""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.search.results import Retest
from pragma_ncu.search.retest import decide


@dataclass(frozen=True)
class Acceptance:
    accepted: bool
    reason: str
    speedup: float | None  # best objective / candidate objective, when both were measured


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
                                "verified candidate replaces it", None)
    verdict = decide([best, candidate])
    speedup = (best.objective / candidate.objective
               if candidate.objective else None)
    won = verdict.accepted and verdict.winner is candidate
    reason = (verdict.reason.replace("the incumbent", "the historical best")
              if verdict.winner is candidate else "the historical best is still the fastest")
    return Acceptance(won, reason, speedup)
