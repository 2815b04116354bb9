"""The search space: the spec's parameters with candidate values, and its restrictions.

A point is a plain dict `{name: value}` over the tunable parameters. Parameters without candidate
values stay at their default and are not part of the space.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from pragma_ncu.spec.model import ParamValue, TaskSpec

Point = dict[str, ParamValue]


@dataclass(frozen=True)
class Dimension:
    name: str
    values: tuple[ParamValue, ...]


@dataclass(frozen=True)
class Space:
    dims: tuple[Dimension, ...]
    restrictions: tuple[str, ...] = ()

    @staticmethod
    def from_spec(spec: TaskSpec) -> Space:
        dims = tuple(Dimension(p.name, p.values) for p in spec.params if p.values)
        return Space(dims, spec.restrictions)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dims)

    @property
    def size(self) -> int:
        return math.prod(len(d.values) for d in self.dims) if self.dims else 0

    def points(self) -> Iterator[Point]:
        """Every point of the product, in declaration order (the last name varies fastest)."""
        for combo in itertools.product(*(d.values for d in self.dims)):
            yield dict(zip(self.names, combo, strict=True))

    def dim(self, name: str) -> Dimension:
        for d in self.dims:
            if d.name == name:
                return d
        raise KeyError(f"no parameter {name!r} in the space (it has {list(self.names)})")

    def with_values(self, name: str, values: Sequence[ParamValue]) -> Space:
        """The space with `name`'s candidates replaced: how the conductor narrows or widens a
        range between rounds. A name not in the space is added as a new dimension."""
        values = tuple(dict.fromkeys(values))
        if not values:
            raise ValueError(f"parameter {name!r} needs at least one candidate value")
        if name not in self.names:
            return replace(self, dims=(*self.dims, Dimension(name, values)))
        return replace(self, dims=tuple(Dimension(d.name, values) if d.name == name else d
                                        for d in self.dims))


def point_key(point: Point) -> str:
    """A stable text key of a point: "BLOCK=256,VEC=8" (names sorted)."""
    return ",".join(f"{k}={point[k]}" for k in sorted(point))
