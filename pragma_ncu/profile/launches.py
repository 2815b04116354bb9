"""The launches of a large report, read without loading what is not needed.

An application's report holds thousands of launches of a few dozen kernels. Grouping and
judging them needs only each launch's names, duration and launch configuration
(`LIGHT_METRICS`); the full profile (every metric, ncu's rules, source lines) is needed only
for the few launches a diagnosis looks at. `Launches` holds every launch with its light
metrics, and `full()` reads the complete profiles of the launches asked for:

- CSV pages: the raw page's rows are kept as text and only the light columns are parsed; a
  row's other metrics, its details-page rows and its source rows are parsed on demand.
- `ncu_report`: one pass reads the light metrics of every action, a second the full actions
  asked for (pragma_ncu.profile.ncu_dump --light / --actions).
- a profile.json, or anything read whole: `full()` hands back what is already there.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pragma_ncu.profile import csv_reader, normalize
from pragma_ncu.profile.demangle import function_name
from pragma_ncu.profile.profiles import KernelProfile, Profile

# What grouping, matching and the duration verdict read from every launch.
LIGHT_METRICS = (
    "gpu__time_duration.sum", "gpu__time_duration.avg", "gpc__cycles_elapsed.max",
    "gpc__cycles_elapsed.avg.per_second",
    "launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z",
    "launch__block_dim_x", "launch__block_dim_y", "launch__block_dim_z",
    "launch__grid_size", "launch__block_size", "launch__shared_mem_per_block_dynamic",
    "device__attribute_display_name",
)

Loader = Callable[[tuple[int, ...]], tuple[KernelProfile, ...]]


@dataclass(frozen=True)
class Launches:
    """Every launch of a report (`profile.kernels`, light unless `complete`) and the reader of
    full launch profiles by index."""

    profile: Profile
    load: Loader
    complete: bool = False  # profile.kernels are full already

    @classmethod
    def of(cls, profile: Profile) -> Launches:
        """A profile read whole: full() looks its kernels up."""
        by_index = {k.index: k for k in profile.kernels}
        return cls(profile, lambda wanted: tuple(by_index[i] for i in wanted), complete=True)

    def full(self, indices: Sequence[int]) -> dict[int, KernelProfile]:
        """The complete profiles of the launches `indices` (kernel.index), by index. Names
        come from the light launches, so a renaming (demangling) of those carries over."""
        light = {k.index: k for k in self.profile.kernels}
        wanted = tuple(sorted(set(indices)))
        missing = [i for i in wanted if i not in light]
        if missing:
            raise KeyError(f"no launch with index {missing[0]}")
        return {k.index: replace(k, name=light[k.index].name, mangled=light[k.index].mangled,
                                 display_name=light[k.index].display_name)
                for k in self.load(wanted)}

    def renamed(self, names: dict[str, str]) -> Launches:
        """The same launches with display names given for mangled ones (`names`: mangled ->
        demangled signature), as from a demangler when a report carries mangled names only."""
        kernels = tuple(
            replace(k, display_name=names[k.mangled],
                    name=function_name(names[k.mangled]))
            if k.mangled in names and k.display_name in ("", k.mangled) else k
            for k in self.profile.kernels)
        return replace(self, profile=replace(self.profile, kernels=kernels))


def csv_launches(raw: str, details: str, source: str = "", report: str = "") -> Launches:
    """Launches from the text of ncu's CSV pages (the raw page, with the details and source
    pages when given). Without a raw page the details page is read whole (it is the small
    one: section summaries only)."""
    if not raw:
        return Launches.of(normalize.from_raw(csv_reader.dump_pages("", details, source,
                                                                    report)))
    page = _RawPage(raw)
    index = _DetailsIndex(details)
    kernels = []
    at = page.columns
    for position, row in enumerate(page.rows):
        info = {"display_name": index.names.get(row[at.id], ""), "metrics": {}}
        metrics = csv_reader.raw_metrics(page.header, page.units, row, page.light)
        kernels.append(csv_reader.kernel_dump(position, row[at.kernel], metrics, info, {}))
    profile = normalize.from_raw({"reader": "csv", "report": report, "kernels": kernels})
    sources: dict[str, Any] = {}

    def load(wanted: tuple[int, ...]) -> tuple[KernelProfile, ...]:
        if source and not sources:
            sources.update(csv_reader.parse_source(source))
        out = []
        for i in wanted:
            row = page.row(i)
            info = index.info(row[at.id])
            metrics = csv_reader.raw_metrics(page.header, page.units, row, at.metrics)
            out.append(csv_reader.kernel_dump(i, row[at.kernel], metrics, info, sources))
        return normalize.from_raw({"kernels": out}).kernels

    return Launches(profile, load)


class _RawPage:
    """The raw page as lines: header and units parsed, each row's light cells parsed once and
    the whole row again only when asked for."""

    def __init__(self, text: str) -> None:
        lines = records(text)
        if not lines:
            raise csv_reader.PageError("raw", "the raw page is empty")
        rows = [next(csv.reader([line])) for line in lines[:2]]
        self.header, self.units = rows[0], rows[1] if len(rows) > 1 else []
        self.columns = csv_reader.raw_columns(self.header, rows[1] if len(rows) > 1 else None)
        if len(lines) == 2:
            raise csv_reader.no_launch_rows()
        self.light = [i for i, name in enumerate(self.header) if name in LIGHT_METRICS]
        self.lines: list[str] = []
        self.rows: list[dict[int, str]] = []  # column index -> cell, light columns only
        keep = (self.columns.id, self.columns.kernel, *self.light)
        for number, line in enumerate(lines[2:], start=3):
            row = next(csv.reader([line]))
            csv_reader.check_raw_row(self.header, row, number)
            self.lines.append(line)
            self.rows.append({i: row[i] for i in keep})

    def row(self, position: int) -> list[str]:
        return next(csv.reader([self.lines[position]]))


class _DetailsIndex:
    """The details page, indexed by launch ID: its display name, and its rows parsed only
    for the launches asked for (the page holds dozens of rows per launch)."""

    def __init__(self, text: str) -> None:
        lines = records(text)
        self.names: dict[str, str] = {}
        self._lines: dict[str, list[str]] = {}
        self._header = lines[0] if lines else ""
        if not lines:
            return
        header = next(csv.reader([lines[0]]))
        csv_reader.check_columns("details", header)
        id_at, name_at = header.index("ID"), header.index("Kernel Name")
        for line in lines[1:]:
            kid = _first_field(line) if id_at == 0 else None
            if kid is None or kid not in self.names:
                row = next(csv.reader([line]))
                if len(row) <= max(id_at, name_at):
                    continue
                kid = row[id_at]
                self.names.setdefault(kid, row[name_at])
            self._lines.setdefault(kid, []).append(line)

    def info(self, kid: str) -> dict[str, Any]:
        lines = self._lines.get(kid)
        if not lines:
            return {}
        return csv_reader.parse_details("\n".join([self._header, *lines])).get(kid, {})


def records(text: str) -> list[str]:
    """The CSV records of a page, one string each: lines, joined again where a quoted cell
    (a rule's description) holds a line break, i.e. while a record's quotes are unbalanced.
    ncu's own ==WARNING== lines before the CSV are dropped."""
    out: list[str] = []
    pending = ""
    for line in text.splitlines():
        if pending:
            pending += "\n" + line
        elif not line or line.startswith("=="):
            continue
        else:
            pending = line
        if pending.count('"') % 2 == 0:
            out.append(pending)
            pending = ""
    if pending:
        out.append(pending)
    return out


def _first_field(line: str) -> str | None:
    """The first cell of a CSV line when it is quoted without inner quotes ("12",...)."""
    if not line.startswith('"'):
        return line.split(",", 1)[0]
    end = line.find('"', 1)
    return line[1:end] if end > 0 and line[end + 1: end + 2] in (",", "") else None
