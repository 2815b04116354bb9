"""The conductor's situations of the rule tests (tests/unit/test_conductor.py and the modules
that ask `decide` the same way): a kernel state and the decision history around the diagnosis
of a recorded profile (tests/fixtures/tune), the knobs BLOCK and VEC."""

from __future__ import annotations

from functools import cache

from pragma_ncu.backends.cuda.diagnosis import diagnose
from pragma_ncu.conductor.situation import Situation
from pragma_ncu.diagnose.findings import Diagnosis
from pragma_ncu.knowledge.compendium import Compendium
from pragma_ncu.measure.records import Decision, KernelState
from pragma_ncu.spec.model import Param
from tests.fakes.tune import load_profile


@cache
def diagnosis(name: str) -> Diagnosis:
    """The diagnosis of the recorded profile `name` (tests/fixtures/tune)."""
    return diagnose(load_profile(name), Compendium.load())


BLOCK = Param("BLOCK", 256, (64, 128, 256, 512, 1024))
VEC = Param("VEC", 1, (1, 2, 4, 8))


def kernel(round_: int = 1, us: float = 100.0, fraction: float | None = 0.5,
           **params: object) -> KernelState:
    """The verified kernel of `round_` at `us` (one shape, "a"), BLOCK=256 and VEC=4 unless
    `params` say otherwise, at `fraction` of its roofline."""
    return KernelState(round_, "original", "k", "h", {"BLOCK": 256, "VEC": 4, **params},
                       {"a": us}, {"a": 1.0}, us, True, ceiling_fraction=fraction)


def situation(*, round_: int = 1, best: KernelState | None = None, accepted: bool = True,
              profile: str = "silu_and_mul", params: tuple[Param, ...] = (BLOCK, VEC),
              history: tuple[Decision, ...] | None = None, failure: str = "",
              failure_text: str = "", candidate: KernelState | None = None) -> Situation:
    """What `decide` sees after round `round_`: `best` (by default `kernel(round_)`), the best
    before it at 130 us (from round 1 on), the candidate (`candidate` or the best; none after
    a `failure`) accepted or not, the recorded `profile`'s diagnosis, the knobs `params`, and
    unless given a history of a tune then retunes."""
    best = best or kernel(round_)
    before = kernel(0, 130.0, 0.4)
    if history is None:
        history = tuple(Decision(n, "tune" if n == 0 else "retune", "", accepted=n > 0)
                        for n in range(round_))
    cand = None if failure else (candidate or best)
    return Situation(round_, best, before if round_ else None, cand, accepted,
                     "beyond the noise" if accepted else "within the noise",
                     1.3 if accepted else None, diagnosis(profile), params, failure,
                     failure_text, history)
