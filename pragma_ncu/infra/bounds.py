"""The ranges a numeric option may take, each written once and applied at both boundaries: the
library's (`pragma_ncu.api` annotates an argument `Count`, `Seconds`, ...; `api.arguments`
checks it at the call) and the command line's (`cli.common.bounded` makes click's
IntRange/FloatRange of the same bound). A count is at least 1, a fraction in (0, 1], a time
above 0, every one finite: `tune --budget 0` or `api.tune(budget=-3)` is bad input (exit 2),
never a run that says "failed (build)" with nothing built.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass
from typing import Annotated, Any

from pragma_ncu.infra.errors import ArgumentError


@dataclass(frozen=True)
class Bound:
    """A number of `kind` (int or float; no bool) in [low, high], finite, with `low` itself
    excluded when `low_open`; `words` say what it counts."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    words: str = ""

    def allows(self, value: object) -> bool:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or (self.kind is int and not isinstance(value, int)):
            return False
        assert isinstance(value, (int, float))
        if not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or value <= self.high

    def __str__(self) -> str:
        noun = "an integer" if self.kind is int else "a finite number"
        if self.low is not None and self.high is not None:
            span = f" in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"
        elif self.low is not None:
            span = f" {'>' if self.low_open else '>='} {self.low:g}"
        else:
            span = ""
        return f"{noun}{span}" + (f" ({self.words})" if self.words else "")

    def check(self, value: object, where: str) -> None:
        """ArgumentError (bad input) naming `where` when `value` is out of the bound."""
        if not self.allows(value):
            raise ArgumentError(f"{where} takes {self}, not {value!r}")


def check_bounds(options: Any) -> None:
    """An options dataclass's bounded fields (annotated `Seconds`, `Count`, ...) checked, for
    one made below the API (whose own `check_fields` checks its options); call it from
    `__post_init__`."""
    kind = type(options)
    hints = typing.get_type_hints(kind, include_extras=True)
    for field in dataclasses.fields(options):
        for bound in getattr(hints.get(field.name), "__metadata__", ()):
            if isinstance(bound, Bound):
                bound.check(getattr(options, field.name),
                            f"{kind.__name__}(): field {field.name!r}")


COUNT = Bound(int, 1, words="a count")
ZERO_OR_MORE = Bound(int, 0, words="a count; 0: none")
ROUNDS = Bound(int, 0, words="rounds after the baseline; 0: the baseline alone")
SEED = Bound(int, 0, words="a seed")  # NumPy's generators take no negative seed
FRACTION = Bound(float, 0, 1, low_open=True, words="a fraction")
SECONDS = Bound(float, 0, low_open=True, words="seconds")
MILLISECONDS = Bound(float, 0, low_open=True, words="milliseconds")
POSITIVE = Bound(float, 0, low_open=True)
PERCENT = Bound(float, 0, words="percent")
REPEATS = Bound(int, 1, 50, words="timing runs")
JOBS = Bound(int, 1, 64, words="requests at once")

Count = Annotated[int, COUNT]
ZeroOrMore = Annotated[int, ZERO_OR_MORE]
Rounds = Annotated[int, ROUNDS]
Seed = Annotated[int, SEED]
Fraction = Annotated[float, FRACTION]
Seconds = Annotated[float, SECONDS]
Milliseconds = Annotated[float, MILLISECONDS]
Positive = Annotated[float, POSITIVE]
Percent = Annotated[float, PERCENT]
Repeats = Annotated[int, REPEATS]
Jobs = Annotated[int, JOBS]
