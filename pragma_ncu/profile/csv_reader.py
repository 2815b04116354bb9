"""The fallback reader: `ncu --import REPORT --csv` pages parsed into the raw dump format.

Used when `ncu_report` cannot be imported or cannot read a report, and for CSV pages users
export themselves. Three pages are read: `raw` (every metric, mangled kernel names), `details`
(ncu's rule results, and each section's summary metrics) and `source` (`cuda,sass` view:
per-line sampling and instruction counts). Pages exported with or without `--print-units base`
are both read: values are converted to base units (pragma_ncu.profile.units) from the raw
page's units row or the details page's unit column. A details page alone (what `ncu --csv` and
the GUI export by default) gives each section's summary metrics under their metric names
(`DETAILS_METRICS`). CSV values are rounded for display (two decimals, thousands separators),
so numbers agree with `ncu_report` to that precision.

Columns are found by their header's name, never by position: ncu's column order is not a
contract (another version, another export, a spreadsheet round trip may move them), and a page
whose header lacks a column a reader needs is refused naming it.
"""

from __future__ import annotations

import csv
import io
import logging
import re
import shlex
import subprocess
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pragma_ncu.profile.demangle import function_name
from pragma_ncu.profile.details_labels import details_metric
from pragma_ncu.profile.units import to_base

Executor = Callable[[list[str]], str]  # runs a command, returns its stdout (raises on failure)

log = logging.getLogger(__name__)
# The raw page's columns that describe a launch; every other column is a metric.
FIXED_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                 "Stream", "Block Size", "Grid Size", "Device", "CC")
_NUMBER = re.compile(r"^-?[\d,]*\.?\d+(?:[eE][-+]?\d+)?$")
# Short stall names of the source page -> the reason names used in metric names.
STALL_COLUMNS = {
    "stall_barrier": "barrier", "stall_branch_resolving": "branch_resolving",
    "stall_dispatch": "dispatch_stall", "stall_drain": "drain", "stall_imc": "imc_miss",
    "stall_lg": "lg_throttle", "stall_long_sb": "long_scoreboard",
    "stall_math": "math_pipe_throttle", "stall_membar": "membar", "stall_mio": "mio_throttle",
    "stall_misc": "misc", "stall_no_inst": "no_instructions", "stall_not_selected": "not_selected",
    "stall_selected": "selected", "stall_short_sb": "short_scoreboard", "stall_sleep": "sleeping",
    "stall_tex": "tex_throttle", "stall_wait": "wait", "stall_gmma": "gmma",
    "stall_warpgroup_arrive": "warpgroup_arrive",
}


class PageError(ValueError):
    """A CSV page that cannot be read as the page it claims to be; `page` says which ("raw",
    "details"), so that a reader of a folder can name the file."""

    def __init__(self, page: str, message: str) -> None:
        super().__init__(message)
        self.page = page


def run_ncu(command: list[str]) -> str:
    log.info("ncu: %s", shlex.join(command))
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... failed: {proc.stderr.strip()[:500]}")
    return proc.stdout


def parse_value(text: str) -> float | str | None:
    """'180,390,656' -> 180390656.0; 'no data' and '' -> None; other text stays text."""
    text = text.strip()
    if text in ("", "no data", "n/a", "N/A"):
        return None
    if _NUMBER.match(text):
        return float(text.replace(",", ""))
    return text


def _rows(text: str) -> list[list[str]]:
    # ncu prints its own ==WARNING== lines before the CSV when a source file is missing.
    lines = [line for line in text.splitlines() if not line.startswith("==")]
    return list(csv.reader(io.StringIO("\n".join(lines))))


@dataclass(frozen=True)
class RawColumns:
    """Where a raw page's columns are, found by name: the launch's ID, its (mangled) kernel
    name, and the metric columns (every column that is not one of `FIXED_COLUMNS`)."""

    id: int
    kernel: int
    metrics: tuple[int, ...]


def raw_columns(header: Sequence[str], units: Sequence[str] | None) -> RawColumns:
    """A raw page's columns by name; a header without "ID" or "Kernel Name", or without a
    metric, or a units row (its second row) that does not fit it, is refused naming what is
    wrong. `units` None: the page has its header and nothing else."""
    check_columns("raw", header)
    metrics = tuple(i for i, name in enumerate(header) if name not in FIXED_COLUMNS)
    if not metrics:
        raise PageError("raw", f"the raw page's header has {len(header)} columns and no "
                        "metric among them: not an `ncu --csv --page raw` export")
    if units is None:
        raise no_launch_rows()
    if len(units) != len(header):
        raise PageError("raw", f"the raw page's second row (the units) has {len(units)} "
                        f"cells where the header has {len(header)}: a truncated or edited "
                        f"page; {_export('raw')}")
    return RawColumns(header.index("ID"), header.index("Kernel Name"), metrics)


def check_columns(page: str, header: Sequence[str]) -> None:
    """A raw or details page names each row's launch ("ID") and kernel ("Kernel Name"): a
    header without them is refused naming the missing column (the other columns of a details
    page are read where present)."""
    missing = [name for name in ("ID", "Kernel Name") if name not in header]
    if missing:
        names = " and ".join(f"'{name}'" for name in missing)
        raise PageError(page, f"the {page} page's header has no {names} column (an `ncu --csv "
                        f"--page {page}` export has one): {_export(page)}")


def _export(page: str) -> str:
    return f"export it again with `ncu --import R --csv --page {page}`"


def no_launch_rows() -> PageError:
    """A raw page of a header (and units row) only."""
    return PageError("raw", "the raw page has its header but no launch rows: a report that "
                     f"profiled no kernel, or an export cut short; {_export('raw')}")


def parse_raw(text: str) -> list[dict[str, Any]]:
    """The raw page: a header row, a units row, then one row per profiled kernel."""
    rows = [row for row in _rows(text) if row]
    if not rows:
        raise PageError("raw", "the raw page is empty")
    header = rows[0]
    columns = raw_columns(header, rows[1] if len(rows) > 1 else None)
    if len(rows) == 2:
        raise no_launch_rows()
    for number, row in enumerate(rows[2:], start=3):
        check_raw_row(header, row, number)
    return [{"id": row[columns.id], "mangled": row[columns.kernel],
             "metrics": raw_metrics(header, rows[1], row, columns.metrics)}
            for row in rows[2:]]


def check_raw_row(header: Sequence[str], row: Sequence[str], number: int) -> None:
    """A launch's row has a cell for every column: a shorter or longer one is a truncated or
    edited page, whose launches would be misread or silently dropped."""
    if len(row) != len(header):
        raise PageError("raw", f"record {number} of the raw page has {len(row)} cells where "
                        f"the header has {len(header)}: a truncated or edited page; "
                        f"{_export('raw')}")


def raw_metrics(header: Sequence[str], units: Sequence[str],
                row: Sequence[str] | Mapping[int, str], columns: Iterable[int]
                ) -> dict[str, list[Any]]:
    """One raw-page row's metrics in base units ({name: [value, unit]}) of the column indices
    `columns` (`RawColumns.metrics` for every metric)."""
    metrics: dict[str, list[Any]] = {}
    for i in columns:
        value = parse_value(row[i])
        if isinstance(value, float):
            metrics[header[i]] = list(to_base(value, units[i]))
        elif value is not None:
            metrics[header[i]] = [value, units[i]]
    return metrics


def parse_details(text: str) -> dict[str, dict[str, Any]]:
    """The details page: kernel id -> {"display_name", "rules", "metrics"} (the section summary
    rows `DETAILS_METRICS` knows, in base units)."""
    out: dict[str, dict[str, Any]] = {}
    rows = _rows(text)
    if not rows:
        return out
    header = rows[0]
    check_columns("details", header)
    for row in rows[1:]:
        if not row or len(row) > len(header):
            continue
        cell = dict(zip(header, row + [""] * (len(header) - len(row)), strict=True))  # metric
        entry = out.setdefault(cell["ID"], {"display_name": cell["Kernel Name"], "rules": [],
                                            "metrics": {}})
        _details_metric(entry["metrics"], cell)
        if cell.get("Rule Name"):
            entry["rules"].append({
                "section": cell.get("Section Name", ""), "rule": cell["Rule Name"],
                "kind": cell.get("Rule Type", ""), "message": cell.get("Rule Description", ""),
                "speedup": parse_value(cell.get("Estimated Speedup", "")),
                "speedup_type": cell.get("Estimated Speedup Type", ""), "title": "",
            })
    return out


def _details_metric(metrics: dict[str, list[Any]], cell: dict[str, str]) -> None:
    metric = details_metric(cell.get("Section Name", ""), cell.get("Metric Name", ""))
    value = parse_value(cell.get("Metric Value", ""))
    if metric is None or value is None:
        return
    unit = cell.get("Metric Unit", "")
    metrics[metric] = list(to_base(value, unit)) if isinstance(value, float) else [value, unit]


def parse_source(text: str) -> dict[str, list[dict[str, Any]]]:
    """The `cuda,sass` source page: function name -> per-line rows (SASS rows skipped)."""
    out: dict[str, list[dict[str, Any]]] = {}
    file, function, header = "", "", []
    for row in _rows(text):
        if not row:
            continue
        if row[0] in ("File Path", "Function Name") and len(row) >= 2:
            file, function = (row[1], function) if row[0] == "File Path" else (file, row[1])
            continue
        if "Line No" in row:
            header = row
            continue
        line_at = header.index("Line No") if header else 0
        if header and len(row) > line_at and row[line_at].isdigit():
            out.setdefault(function, []).append(_source_row(file, header, row))
    return out


def _source_row(file: str, header: list[str], row: list[str]) -> dict[str, Any]:
    """One source line's row, its cells by column name. Two columns are named "Source": the
    line's text, and the SASS of the instruction rows below it ("-" on a line's row)."""
    cells = dict(zip(header, row, strict=False))
    cells["Source"] = next((cell for name, cell in zip(header, row, strict=False)
                            if name == "Source" and cell != "-"), "")
    values: dict[str, float] = {}
    samples = parse_value(cells.get("Warp Stall Sampling (All Samples)", ""))
    if isinstance(samples, float):
        values["smsp__pcsamp_sample_count"] = samples
    inst = parse_value(cells.get("Instructions Executed", ""))
    if isinstance(inst, float):
        values["inst_executed"] = inst
    for column, reason in STALL_COLUMNS.items():
        value = parse_value(cells.get(column, ""))
        if isinstance(value, float) and value:
            values[f"smsp__pcsamp_warps_issue_stalled_{reason}"] = value
    text = cells.get("Source", "")
    text = text if not text.startswith("<") else ""  # "<Unable to open source file>"
    return {"file": file, "line": int(cells["Line No"]), "values": values, "text": text.strip()}


def page_command(ncu: str, report: str, page: str) -> list[str]:
    """The `ncu --import` command that exports one CSV page ("raw", "details" or "source") in
    the form the parsers here read."""
    extra = {"raw": ["--print-kernel-base", "mangled"], "details": [],
             "source": ["--print-source", "cuda,sass"]}[page]
    return [ncu, "--import", report, "--csv", "--print-units", "base", "--page", page, *extra]


def dump(report: str, ncu: str, run: Executor = run_ncu) -> dict[str, Any]:
    """Read `report` through ncu's CSV pages into the raw dump format of `ncu_dump`."""
    raw = run(page_command(ncu, report, "raw"))
    details = run(page_command(ncu, report, "details"))
    try:
        source = run(page_command(ncu, report, "source"))
    except RuntimeError:
        source = ""  # no source counters collected: the page is empty or refused
    return dump_pages(raw, details, source, report)


def dump_pages(raw: str, details: str, source: str = "", report: str = "") -> dict[str, Any]:
    """The raw dump from the text of the CSV pages (as saved by `ncu --import --csv`): the
    raw page with the details page's rules, or the details page alone (its summary metrics)."""
    by_id = parse_details(details) if details else {}
    lines = parse_source(source) if source else {}
    if raw:
        listed = [(k["id"], k["mangled"], k["metrics"]) for k in parse_raw(raw)]
    else:
        listed = [(i, "", v["metrics"]) for i, v in by_id.items()]
    kernels = [kernel_dump(index, mangled, metrics, by_id.get(kid, {}), lines)
               for index, (kid, mangled, metrics) in enumerate(listed)]
    return {"reader": "csv", "report": report, "kernels": kernels}


def kernel_dump(index: int, mangled: str, metrics: dict[str, list[Any]],
                info: dict[str, Any], lines: dict[str, list[dict[str, Any]]]
                ) -> dict[str, Any]:
    """One kernel of the raw dump: the raw page's metrics over the details page's (`info`:
    display name, rules, summary metrics) and its source rows."""
    display = info.get("display_name") or mangled
    return {"index": index, "name": function_name(display), "mangled": mangled,
            "display_name": display, "metrics": {**info.get("metrics", {}), **metrics},
            "rules": info.get("rules", []), "source": list(_source_for(lines, display))}


def page_kind(text: str) -> str:
    """Which `ncu --csv` page a text is: "raw", "details", "source", or "" (none of them)."""
    head = next(iter(_rows(text[:20000])), [])
    if "ID" in head and "Metric Name" in head:
        return "details"
    if "ID" in head and any("__" in h for h in head):
        return "raw"
    if head[:1] in (["File Path"], ["Function Name"], ["Kernel Name"]) or "Line No" in text[:5000]:
        return "source"
    return ""


def _source_for(source: dict[str, list[dict[str, Any]]], display: str) -> Iterator[dict[str, Any]]:
    for function, rows in source.items():
        if function == display or function_name(function) == function_name(display):
            yield from rows
