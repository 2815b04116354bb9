"""The deterministic CPU collector: valgrind's cachegrind with cache and branch simulation.

Where the CPU's hardware counters cannot be read (virtual machines, containers, CI), the same
questions get simulated answers that do not vary from run to run: instructions, L1 and
last-level misses for instructions and data, conditional and indirect branch mispredicts, in
total and per source line. A profile built from them says it was simulated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# cachegrind's events -> what they count
EVENTS = {
    "Ir": "instructions executed", "I1mr": "L1 instruction-cache read misses",
    "ILmr": "last-level instruction read misses", "Dr": "data reads",
    "D1mr": "L1 data-cache read misses", "DLmr": "last-level data read misses",
    "Dw": "data writes", "D1mw": "L1 data-cache write misses",
    "DLmw": "last-level data write misses", "Bc": "conditional branches",
    "Bcm": "conditional branch mispredicts", "Bi": "indirect branches",
    "Bim": "indirect branch mispredicts",
}
_NAME = re.compile(r"^\((\d+)\)(?:\s+(.*))?$")  # compressed names: "(3) file.c" then "(3)"


class CachegrindError(ValueError):
    """The file is not a cachegrind output file."""


@dataclass(frozen=True)
class LineCounts:
    file: str
    function: str
    line: int
    counts: dict[str, int]


@dataclass(frozen=True)
class Cachegrind:
    command: str
    caches: tuple[str, ...]  # the simulated caches ("D1 cache: 32768 B, 64 B, 8-way ...")
    totals: dict[str, int]
    lines: tuple[LineCounts, ...] = field(default=())

    def derived(self) -> dict[str, float]:
        """Rates the diagnosis reads: misses per access and per 1000 instructions."""
        t = self.totals
        ir = t.get("Ir", 0)
        data = t.get("Dr", 0) + t.get("Dw", 0)
        d1 = t.get("D1mr", 0) + t.get("D1mw", 0)
        dl = t.get("DLmr", 0) + t.get("DLmw", 0)
        branches = t.get("Bc", 0) + t.get("Bi", 0)
        mispredicts = t.get("Bcm", 0) + t.get("Bim", 0)
        out = {"data_accesses": float(data), "d1_misses": float(d1), "ll_data_misses": float(dl),
               "branch_mispredicts": float(mispredicts)}
        if data:
            out["d1_miss_rate"] = d1 / data
            out["ll_data_miss_rate"] = dl / data
        if branches:
            out["mispredict_rate"] = mispredicts / branches
        if ir:
            out["d1_mpki"] = 1000.0 * d1 / ir
            out["ll_mpki"] = 1000.0 * dl / ir
        return out

    def hot_lines(self, event: str, limit: int = 10) -> tuple[LineCounts, ...]:
        ranked = sorted((ln for ln in self.lines if ln.counts.get(event)),
                        key=lambda ln: -ln.counts[event])
        return tuple(ranked[:limit])


def parse(text: str) -> Cachegrind:
    """A `cachegrind.out.*` file (valgrind 3.x format)."""
    events: list[str] = []
    caches: list[str] = []
    command, totals = "", {}
    lines: dict[tuple[str, str, int], dict[str, int]] = {}
    names: dict[str, dict[str, str]] = {"fl": {}, "fn": {}}
    where = {"fl": "", "fn": ""}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        key, _, rest = line.partition(":")
        if key == "desc":
            caches.append(rest.strip())
        elif key == "cmd":
            command = rest.strip()
        elif key == "events":
            events = rest.split()
        elif key == "summary":
            totals = _counts(events, rest.split(), number)
        elif line[:3] in ("fl=", "fn=", "fi=", "fe="):
            kind = "fl" if line[:2] in ("fl", "fi", "fe") else "fn"
            where[kind] = _name(names[kind], line[3:])
        elif line[0].isdigit():
            fields = line.split()
            counts = _counts(events, fields[1:], number)
            slot = lines.setdefault((where["fl"], where["fn"], int(fields[0])), {})
            for k, v in counts.items():
                slot[k] = slot.get(k, 0) + v
    if not events:
        raise CachegrindError("no 'events:' line: not a cachegrind output file")
    if not totals:  # newer valgrinds may leave the summary out: sum the lines
        for counts in lines.values():
            for k, v in counts.items():
                totals[k] = totals.get(k, 0) + v
    return Cachegrind(command, tuple(caches), totals,
                      tuple(LineCounts(f, fn, ln, c) for (f, fn, ln), c in lines.items()))


def _counts(events: list[str], values: list[str], number: int) -> dict[str, int]:
    if len(values) > len(events):
        raise CachegrindError(f"line {number}: {len(values)} counts for {len(events)} events")
    try:
        return {e: int(v) for e, v in zip(events, values, strict=False) if v != "."}
    except ValueError:
        raise CachegrindError(f"line {number}: counts must be integers: {values}") from None


def _name(table: dict[str, str], text: str) -> str:
    m = _NAME.match(text.strip())
    if m is None:
        return text.strip()
    if m.group(2):
        table[m.group(1)] = m.group(2)
    return table.get(m.group(1), text.strip())
