"""The closed loop of `pragma-ncu tune`: coder, search, profiler and conductor, round by round.

`run` drives the rounds (`rounds`), `load_state` resumes a run from the store (`resume`),
`summary` and `write_best` say what a finished run found (`results`); `side_by_side` holds the
re-test of a candidate against the historical best that acceptance rests on.
"""

from pragma_ncu.loop.context import Context, RunPlan
from pragma_ncu.loop.results import summary, write_best
from pragma_ncu.loop.resume import load_state
from pragma_ncu.loop.rounds import TuneError, run, variant_checker

__all__ = ["Context", "RunPlan", "TuneError", "load_state", "run", "summary",
           "variant_checker", "write_best"]
