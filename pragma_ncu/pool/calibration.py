"""Calibrating a pool before its first search: is any device markedly slower than the others?

The search ranks points measured on different devices against each other. A device slower by
X% makes every point it measures look X% worse, so good points that land there rank below
worse ones measured elsewhere and may miss the re-test. So before the search every worker
measures the same short kernel at once (the search's own incumbent at its first shape: the
kind of work the search will time), twice, keeping its faster median. A device is markedly
slower when its time exceeds the median of the other devices' by more than `SLOWER_BY` and by
more than the noise of the two figures (each one's interquartile range over its median, added):
it is then excluded from the search, with the figures said. Excluded rather than normalized:
one factor measured on one kernel does not hold for every point (a card held at a lower memory
clock slows memory-bound points more than compute-bound ones; one shared with another process
slows each kernel by its share of the time slices), and an excluded card costs throughput but
never ranks a point wrongly (docs/tuner.md).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

SLOWER_BY = 0.10  # beyond the few percent cards of one model differ by, which the re-test absorbs


@dataclass(frozen=True)
class DeviceFigure:
    """One device's calibration: its median time (None when it measured nothing), the noise
    of that figure, and why there is none."""

    label: str
    median_us: float | None
    noise: float = 0.0  # the measurement's interquartile range over its median
    problem: str = ""


@dataclass(frozen=True)
class Calibration:
    """Every device's figure, its time over the median of the others', and those excluded."""

    kernel: str  # what was measured: the point and the shape
    figures: tuple[DeviceFigure, ...]
    relative: tuple[tuple[str, float], ...]  # label -> time over the others' median
    excluded: tuple[str, ...]  # labels of the markedly slower devices
    slower_by: float = SLOWER_BY

    def ratio(self, label: str) -> float | None:
        return dict(self.relative).get(label)

    def why(self, label: str) -> str:
        """The reason an excluded device is dropped from the search."""
        ratio = self.ratio(label) or 0.0
        return (f"calibration: {ratio:.2f}x the other GPUs' median time on {self.kernel}, "
                f"more than {self.slower_by:.0%} and the noise slower")

    def summary(self) -> str:
        """One line: each device's figure and ratio, and what was decided."""
        verdict = (f"excluded: {', '.join(self.excluded)}" if self.excluded else
                   f"all within {self.slower_by:.0%} and the noise")
        figures = "; ".join(self._figure(f) for f in self.figures)
        return f"calibration on {self.kernel}: {figures}; {verdict}"

    def _figure(self, f: DeviceFigure) -> str:
        if f.median_us is None:
            return f"{f.label} no figure ({f.problem or 'not measured'})"
        ratio = self.ratio(f.label)
        return f"{f.label} {f.median_us:.2f} µs" + (f" ({ratio:.2f}x)" if ratio else "")

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "slower_by": self.slower_by,
                "excluded": list(self.excluded),
                "devices": [{**asdict(f), "relative": self.ratio(f.label)}
                            for f in self.figures]}


def judge(kernel: str, figures: Sequence[DeviceFigure],
          slower_by: float = SLOWER_BY) -> Calibration:
    """Each device's time over the median of the others' that measured, and which are
    markedly slower (more than `slower_by` and both figures' noise). A device alone, or
    without a figure, is never excluded."""
    times = {f.label: (f.median_us, f.noise) for f in figures
             if f.median_us is not None and f.median_us > 0}
    relative, excluded = [], []
    for label, (median_us, own_noise) in times.items():
        others = [value for other, value in times.items() if other != label]
        if not others:
            continue
        ratio = median_us / statistics.median(t for t, _ in others)
        relative.append((label, ratio))
        if ratio - 1.0 > max(slower_by, own_noise + statistics.median(n for _, n in others)):
            excluded.append(label)
    return Calibration(kernel, tuple(figures), tuple(relative), tuple(excluded), slower_by)
