"""Search strategies: they propose points and learn from values; they never touch the GPU.

`ask(count)` returns up to `count` points not proposed before (fewer, or none, when the strategy has
nothing new); `tell(point, value)` reports the objective (lower is better) or None for a point
that failed (infeasible, compile error, wrong answer). Exhaustive search walks the feasible
points in order; the others are optuna samplers driven through its ask-and-tell interface.

`STRATEGIES` is the registry, name -> factory, and the one place a strategy is added: a class
with `ask` and `tell` (in this module or one of its own) and one line here. `--strategy`
offers `choices()`: "auto" (exhaustive when the feasible space fits the budget, else TPE:
`search.serial.choose_strategy`) and the registered names; `make` builds one by name, and an
unknown name is an `UnknownStrategy` listing them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from pragma_ncu.infra.errors import InputError
from pragma_ncu.search.space import Point, Space, point_key
from pragma_ncu.spec.model import ParamValue

# Proposals in a row that were all seen before, after which the next point is an unseen one
# drawn at random. A sampler that has settled re-proposes what it knows, and each proposal costs
# more as trials accumulate: near the end of a covered 576-point space one new point took
# hundreds of proposals and seconds, and eight workers asking at once measured fewer points per
# second than one (benchmarks/pool_scaling.py, docs/tuner.md).
FILL_AFTER_DUPLICATES = 16
RANDOM_DRAWS = 64  # random picks of the product tried before the unseen points are listed
AUTO = "auto"  # not a strategy: the rule that picks one (search.serial.choose_strategy)


class Strategy(Protocol):
    name: str

    def ask(self, count: int) -> list[Point]: ...

    def tell(self, point: Point, value: float | None) -> None: ...


class Exhaustive:
    """Every point of `points`, in order."""

    name = "exhaustive"

    def __init__(self, points: Iterable[Point]) -> None:
        self._points: Iterator[Point] = iter(points)

    def ask(self, count: int) -> list[Point]:
        out = []
        for point in self._points:
            out.append(point)
            if len(out) >= count:
                break
        return out

    def tell(self, point: Point, value: float | None) -> None:
        """Exhaustive search does not learn."""


class OptunaStrategy:
    """An optuna sampler over the space's categorical dimensions, seeded.

    A failed point is told as a penalty (twice the worst value seen), so the sampler learns to
    avoid the region rather than proposing it again; before any success it is a failed trial.
    With `parallel`, TPE is a constant liar: while several points are being measured at once,
    it pretends each of them scored the worst value seen, so one batch spreads out instead of
    asking for one neighbourhood several times. Once it proposes only points already seen
    (`FILL_AFTER_DUPLICATES` in a row), an unseen point drawn at random is put to it as its
    next trial, so a settled sampler costs a bounded number of proposals per new point and the
    budget is spent on points not yet measured; when every point has been proposed, `ask`
    returns none.
    """

    def __init__(self, space: Space, sampler: str = "tpe", seed: int = 0,
                 parallel: bool = False) -> None:
        import optuna

        if sampler not in SAMPLERS:
            raise UnknownStrategy(f"unknown sampler {sampler!r}; one of {', '.join(SAMPLERS)}")
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.name = sampler
        self.space = space
        self._optuna = optuna
        self.study = optuna.create_study(direction="minimize",
                                         sampler=SAMPLERS[sampler](optuna, seed, parallel))
        self._pending: dict[str, list[Any]] = {}  # key -> trials waiting for its value
        self._known: dict[str, float | None] = {}
        self._worst = -math.inf
        self._rng = random.Random(seed)
        self._exhausted = False

    def ask(self, count: int) -> list[Point]:
        out: list[Point] = []
        duplicates = 0
        while len(out) < count and not self._exhausted:
            if duplicates >= FILL_AFTER_DUPLICATES:
                unseen = self._unseen_point()
                if unseen is None:
                    self._exhausted = True
                    break
                self.study.enqueue_trial(unseen)  # the sampler's history holds it as its own
                duplicates = 0
            trial = self.study.ask()
            point: Point = {d.name: _suggest(trial, d.name, d.values) for d in self.space.dims}
            key = point_key(point)
            if key in self._known:
                self._tell_trial(trial, self._known[key])
                duplicates += 1
            elif key in self._pending:
                self._pending[key].append(trial)
                duplicates += 1
            else:
                self._pending[key] = [trial]
                out.append(point)
                duplicates = 0
        return out

    def _unseen_point(self) -> Point | None:
        """A point neither measured nor pending, at random (seeded): a few draws from the
        product, then, when those all hit seen points (the space is nearly covered), a pick
        among the points left. None when every point has been proposed."""
        def seen(point: Point) -> bool:
            key = point_key(point)
            return key in self._known or key in self._pending

        for _ in range(RANDOM_DRAWS):
            point = {d.name: self._rng.choice(d.values) for d in self.space.dims}
            if not seen(point):
                return point
        left = [point for point in self.space.points() if not seen(point)]
        return self._rng.choice(left) if left else None

    def tell(self, point: Point, value: float | None) -> None:
        key = point_key(point)
        if value is not None and math.isfinite(value):
            self._worst = max(self._worst, value)
        else:
            value = None
        self._known[key] = value
        for trial in self._pending.pop(key, []):
            self._tell_trial(trial, value)

    def _tell_trial(self, trial: Any, value: float | None) -> None:
        if value is None and math.isfinite(self._worst):
            value = 2.0 * self._worst if self._worst > 0 else self._worst + 1.0
        if value is None:
            self.study.tell(trial, state=self._optuna.trial.TrialState.FAIL)
        else:
            self.study.tell(trial, value)


def _suggest(trial: Any, name: str, values: tuple[ParamValue, ...]) -> ParamValue:
    value: ParamValue = trial.suggest_categorical(name, list(values))
    return value


def _tpe(optuna: Any, seed: int, parallel: bool) -> Any:
    return optuna.samplers.TPESampler(seed=seed, multivariate=True, n_startup_trials=8,
                                      constant_liar=parallel)


def _random(optuna: Any, seed: int, parallel: bool) -> Any:
    return optuna.samplers.RandomSampler(seed=seed)


def _gp(optuna: Any, seed: int, parallel: bool) -> Any:
    try:
        return optuna.samplers.GPSampler(seed=seed)
    except ImportError as exc:  # GPSampler needs torch and scipy
        raise UnknownStrategy(f"the gp sampler is unavailable here ({exc}); use tpe") from None


# optuna's samplers, by the names users give them
SAMPLERS: dict[str, Callable[[Any, int, bool], Any]] = {"tpe": _tpe, "gp": _gp,
                                                        "random": _random}


class Factory(Protocol):
    """How a registered strategy is made for one search (`parallel`: points are asked for
    while others are still being measured)."""

    def __call__(self, space: Space, seed: int, parallel: bool) -> Strategy: ...


def _exhaustive(space: Space, seed: int, parallel: bool) -> Strategy:
    return Exhaustive(space.points())


def _sampler(name: str) -> Factory:
    def make(space: Space, seed: int, parallel: bool) -> Strategy:
        return OptunaStrategy(space, name, seed, parallel)
    return make


STRATEGIES: dict[str, Factory] = {
    "exhaustive": _exhaustive,
    **{name: _sampler(name) for name in SAMPLERS},
}


class UnknownStrategy(InputError, ValueError):
    """A strategy name that is not registered (or a sampler this machine cannot run)."""


def choices() -> tuple[str, ...]:
    """Every name `--strategy` takes: "auto" and the registered strategies."""
    return (AUTO, *STRATEGIES)


def check(name: str) -> str:
    """`name` when `--strategy` takes it, else UnknownStrategy listing what it takes."""
    if name not in choices():
        raise UnknownStrategy(f"unknown search strategy {name!r}; registered: "
                              f"{', '.join(choices())}")
    return name


def make(name: str, space: Space, seed: int = 0, parallel: bool = False) -> Strategy:
    """The registered strategy `name` for a search of `space`."""
    if name not in STRATEGIES:
        check(name)
        raise UnknownStrategy(f"{name!r} chooses a strategy; it is not one")
    return STRATEGIES[name](space, seed, parallel)
