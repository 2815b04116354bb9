"""ncu's display units -> the base units every reader hands on.

ncu prints values in "display" units unless asked for `--print-units base`: a raw CSV page then
carries one units row that scales its whole column (`ms`, `Gbyte`, `Ghz`, `Tbyte/s`, ...), and
a details page a unit per row (`us` on one kernel, `ms` on the next). Everything downstream
reads base units: nanoseconds, bytes, hertz, per second, counts. ncu's prefixes are decimal
(a Gbyte is 1e9 bytes, as the base and display pages of one report agree); binary ones
(`Kibyte`) are read as such too.
"""

from __future__ import annotations

import re

_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40}
# Counted things a prefix may scale (the base name is what the base-unit page prints).
_COUNTS = ("byte", "inst", "cycle", "sector", "request", "warp", "thread", "block", "hz",
           "transaction", "wavefront", "register", "branches", "pass")
_TIME = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
         "s": 1e9, "second": 1e9}
_COUNT_UNIT = re.compile(r"^(Ki|Mi|Gi|Ti|[kKMGTP]?)(" + "|".join(_COUNTS) + r")$", re.IGNORECASE)


def _count(unit: str) -> tuple[float, str] | None:
    """'Gbyte' -> (1e9, 'byte'); 'Ghz' -> (1e9, 'hz'); 'cycle' -> (1, 'cycle')."""
    m = _COUNT_UNIT.match(unit)
    if m is None:
        return None
    prefix, base = m.group(1), m.group(2)
    if prefix.lower() == "k" and prefix not in _PREFIX:
        prefix = "K"
    factor = _PREFIX.get(prefix) or _PREFIX.get(prefix.upper(), 1.0)
    return factor, base.lower() if base.lower() == "hz" else base


def to_base(value: float, unit: str) -> tuple[float, str]:
    """(value, unit) in ncu's display units -> the same quantity in base units.

    Durations become ns, sizes bytes, frequencies hz, rates per second (`Tbyte/s` ->
    `byte/s`, `sector/ns` -> `sector/s`), per-cycle and per-block ratios keep their
    denominator; units it does not know (`%`, `register/thread`, '') are returned as they are.
    """
    unit = unit.strip()
    if unit in _TIME:
        return value * _TIME[unit], "ns"
    if "/" in unit:
        num, den = unit.split("/", 1)
        scaled = _count(num)
        n_factor, n_base = scaled if scaled else (1.0, num)
        if den in _TIME:  # a rate: per second
            return value * n_factor * (1e9 / _TIME[den]), f"{n_base}/s"
        d_scaled = _count(den)
        d_factor, d_base = d_scaled if d_scaled else (1.0, den)
        return value * n_factor / d_factor, f"{n_base}/{d_base}"
    scaled = _count(unit)
    if scaled is None:
        return value, unit
    factor, base = scaled
    return value * factor, base
