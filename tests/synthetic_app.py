"""A generator of SYNTHETIC application reports for tests: ncu raw CSV pages whose rows are
copies of rows recorded on the H200 (tests/fixtures), with the kernel name, the duration and the
launch configuration rewritten. Nothing here is a GPU recording: it makes the many-launch,
many-kernel shapes (noise-only pairs, planted shifts, reordered or missing launches, 5,000
launches) that the recorded applications (tests/fixtures/apps) cannot vary."""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORPUS_PAGE = FIXTURES / "corpus" / "default" / "first" / "raw.csv.gz"
_DURATIONS = ("gpu__time_duration.sum", "gpu__time_duration.avg", "gpu__time_duration.min",
              "gpu__time_duration.max")


@dataclass(frozen=True)
class Launch:
    """One synthetic launch: a copy of the recorded row of kernel `like`, named `name` (and
    `mangled`), lasting `duration_ns`, optionally at another grid size."""

    like: str
    name: str
    duration_ns: float
    mangled: str = ""
    grid: int | None = None


def recorded_page(path: Path = CORPUS_PAGE) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """Header, units row and the recorded rows by kernel name of a raw page."""
    rows = list(csv.reader(io.StringIO(gzip.decompress(path.read_bytes()).decode())))
    name = rows[0].index("Kernel Name")  # columns by name, as the readers find them
    return rows[0], rows[1], {row[name]: row for row in rows[2:]}


def raw_page(launches: list[Launch], page: Path = CORPUS_PAGE) -> str:
    """The raw CSV page (base units) of `launches`, in that order."""
    header, units, by_name = recorded_page(page)
    col = {name: i for i, name in enumerate(header)}
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerows([header, units])
    for i, launch in enumerate(launches):
        row = list(by_name[launch.like])
        row[col["ID"]], row[col["Kernel Name"]] = str(i), launch.mangled or launch.name
        for metric in _DURATIONS:
            if metric in col:
                row[col[metric]] = f"{launch.duration_ns:.0f}"
        if launch.grid is not None:
            for metric in ("launch__grid_size", "launch__grid_dim_x"):
                row[col[metric]] = str(launch.grid)
        writer.writerow(row)
    return out.getvalue()


def reordered(text: str, order: str) -> str:
    """A CSV page with its columns moved, as another ncu version or a spreadsheet may write
    it: "reversed" keeps the first column (ID, or Line No of a source page) first and reverses
    the others, "rotated" moves the first column last, "drop:NAME" leaves the column NAME out.
    The rows of two cells or fewer (a source page's File Path and Function Name) stay."""
    rows = list(csv.reader(io.StringIO(text)))
    header = next(row for row in rows if len(row) > 2)
    width = len(header)
    if order == "reversed":
        columns = [0, *range(width - 1, 0, -1)]
    elif order == "rotated":
        columns = [*range(1, width), 0]
    else:
        columns = [i for i in range(width) if header[i] != order.removeprefix("drop:")]
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
        [[(row + [""] * width)[i] for i in columns] if len(row) > 2 else row  # short rows
         for row in rows])
    return out.getvalue()


def write_side(folder: Path, launches: list[Launch], gz: bool = True) -> Path:
    """A folder side holding the raw page of `launches` (raw.csv.gz, or raw.csv)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = raw_page(launches)
    if gz:
        (folder / "raw.csv.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        (folder / "raw.csv").write_text(text)
    return folder


def noisy(median_ns: float, count: int, rng: np.random.Generator, spread: float = 0.01
          ) -> list[float]:
    """`count` durations around `median_ns`, log-normal with sigma `spread`."""
    return list(median_ns * np.exp(rng.normal(0.0, spread, count)))
