"""Reading a report: `ncu_report` first (in a subprocess), the CSV pages as the fallback.

Also reads what `explain` accepts besides `.ncu-rep`, none of which needs ncu: a saved
`profile.json` (or `.json.gz`), a raw dump, one CSV page (`ncu --csv` output, the raw or the
details page, in base or display units, optionally gzipped), or a folder of CSV exports
(`raw.csv` and/or `details.csv`, optional `source.csv`).

Bad input is answered at this boundary: whatever a reader trips over in a file (a truncated or
garbled gzip stream, bytes that are not text, JSON of another shape, a CSV row that does not fit
its header) leaves `read_report` and `read_launches`, and the launches they load later, as one
ReportError naming the file; a missing ncu is a ToolchainError (the environment, not the file).
"""

from __future__ import annotations

import contextlib
import csv
import functools
import gzip
import json
import logging
import shlex
import subprocess
import zlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from pragma_ncu.infra.errors import InputError, ToolchainError
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import NcuInfo, find_ncu
from pragma_ncu.profile import csv_reader, launches, normalize
from pragma_ncu.profile.launches import Launches
from pragma_ncu.profile.profiles import KernelProfile, Profile, profile_from_json

DUMP_TIMEOUT_S = 300
log = logging.getLogger(__name__)
# What a reader trips over in a malformed file (a truncated gzip stream is an EOFError, a
# garbled one a zlib.error, a short CSV row an IndexError, a JSON of another shape a KeyError,
# TypeError or AttributeError, a NUL byte a csv.Error, a JSON nested beyond Python's limit a
# RecursionError).
MALFORMED = (ValueError, IndexError, KeyError, TypeError, AttributeError, EOFError, OSError,
             zlib.error, csv.Error, RecursionError)
P = ParamSpec("P")
R = TypeVar("R")


class ReportError(InputError):
    """A report could not be read by any reader; the message carries each reader's reason."""


@contextlib.contextmanager
def reading(path: Path | str) -> Iterator[None]:
    """Whatever reading `path` trips over, as one ReportError naming the file and why."""
    try:
        yield
    except (ReportError, ToolchainError):
        raise
    except MALFORMED as exc:
        raise ReportError(f"{path}: cannot read it: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:200]
    if isinstance(exc, EOFError | zlib.error | gzip.BadGzipFile):
        return f"a truncated or corrupt gzip file ({text})"
    if isinstance(exc, UnicodeDecodeError):
        return f"not text in UTF-8 ({text})"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({text})"
    if isinstance(exc, RecursionError):
        return "nested too deeply to be a report"
    return f"not a report this reader knows ({type(exc).__name__}: {text})"


def _at_the_boundary(read: Callable[P, R]) -> Callable[P, R]:
    """A public reader whose bad input leaves it as one ReportError naming the file (its
    first argument)."""
    @functools.wraps(read)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        with reading(args[0] if args else "the report"):  # type: ignore[arg-type]
            return read(*args, **kwargs)
    return guarded


@_at_the_boundary
def read_report(path: Path, settings: Settings, reader: str = "auto",
                collection: dict[str, Any] | None = None) -> Profile:
    """A Profile from `path` (.ncu-rep, profile.json, raw dump .json, or a CSV folder)."""
    if not path.exists():
        raise ReportError(f"no such report: {path}")
    if path.is_dir():
        return read_csv_folder(path)
    if path.name.endswith((".json", ".json.gz")):
        return _read_json(path)
    if path.name.endswith((".csv", ".csv.gz")):
        return read_csv_file(path)
    _check_ncu_rep(path)
    try:
        ncu = find_ncu(settings)
    except ToolchainError as exc:
        raise ToolchainError(f"reading {path.name} needs Nsight Compute: {exc}. Without ncu, "
                             "explain a profile.json or a folder of CSV exports instead"
                             ) from None
    raw, notes = _dump(path, ncu, settings, reader)
    profile = normalize.from_raw(raw, collection, ncu.version)
    if not profile.kernels:
        raise ReportError(f"{path} holds no profiled kernel (a truncated file, or a report "
                          f"written by an ncu newer than {ncu.version}?)")
    return replace(profile, collection={**profile.collection, **({"notes": notes} if notes
                                                                 else {})})


ACCEPTED = ("a .ncu-rep, a profile .json (or .json.gz), an ncu CSV page (.csv, .csv.gz) or a "
            "folder of them")


NCU_REP_MAGIC = b"NVR\x00"  # the first bytes of every Nsight Compute report


def _check_ncu_rep(path: Path) -> None:
    """Only an .ncu-rep goes to ncu: another profiler's report (.nsys-rep, .qdrep), an
    image or a text file is not one, and saying that ncu is missing would mislead; nor is an
    empty file, or one named .ncu-rep that does not start as a report does (NCU_REP_MAGIC)."""
    if path.suffix != ".ncu-rep":
        raise ReportError(f"{path}: not a report: expected {ACCEPTED}")
    with path.open("rb") as file:
        head = file.read(len(NCU_REP_MAGIC))
    if not head:
        raise ReportError(f"{path}: not a report: the file is empty (an interrupted `ncu -o`?)")
    if head != NCU_REP_MAGIC:
        raise ReportError(f"{path}: not a report: an Nsight Compute report starts with "
                          f"{NCU_REP_MAGIC!r}, this file with {head!r}")


def _dump(path: Path, ncu: NcuInfo, settings: Settings, reader: str
          ) -> tuple[dict[str, Any], list[str]]:
    notes: list[str] = []
    if reader in ("auto", "ncu_report"):
        if ncu.python_dir is None:
            notes.append("ncu_report not found in the ncu install (set PRAGMA_NCU_NCU_PYTHON)")
        else:
            raw, why = dump_with_ncu_report(path, ncu.python_dir, settings.python)
            if raw is not None:
                return _complete_rules(raw, path, ncu, notes), notes
            notes.append(why)
        if reader == "ncu_report":
            raise ReportError("; ".join(notes))
    try:
        return csv_reader.dump(str(path), ncu.path), notes
    except (RuntimeError, ValueError, OSError, subprocess.TimeoutExpired) as exc:
        raise ReportError(f"cannot read {path}: " + "; ".join([*notes, f"ncu --import: {exc}"])
                          + ". Is it a complete .ncu-rep from this or an older ncu "
                          f"({ncu.version})?") from None


def _complete_rules(raw: dict[str, Any], path: Path, ncu: NcuInfo, notes: list[str]
                    ) -> dict[str, Any]:
    """ncu_report (2025.3) hands some rules over without their message (the source-counter
    rules, e.g. UncoalescedGlobalAccess); the details page has them. Take the page's rules
    then, keeping ncu_report's titles."""
    if all(r.get("message") for k in raw["kernels"] for r in k.get("rules", ())):
        return raw
    try:
        pages = csv_reader.parse_details(csv_reader.run_ncu(
            csv_reader.page_command(ncu.path, str(path), "details")))
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        notes.append(f"some rule messages are missing and the details page failed: {exc}")
        return raw
    by_index = list(pages.values())
    for kernel in raw["kernels"]:
        if kernel["index"] >= len(by_index):
            continue
        titles = {_rule_key(r): r.get("title", "") for r in kernel.get("rules", ())}
        kernel["rules"] = [{**r, "title": titles.get(_rule_key(r), "")}
                           for r in by_index[kernel["index"]]["rules"]]
    return raw


def _rule_key(rule: dict[str, Any]) -> tuple[str, str, str]:
    return (rule["section"], rule["rule"], normalize.clean_message(rule["message"])[:40])


def dump_with_ncu_report(path: Path, python_dir: Path, python: str, *options: str
                         ) -> tuple[dict[str, Any] | None, str]:
    """(raw dump, "") or (None, why not): ncu_report runs in a child process (`options`:
    ncu_dump's --light or --actions)."""
    cmd = [python, "-m", "pragma_ncu.profile.ncu_dump", str(path), "--ncu-python",
           str(python_dir), *options]
    log.info("reading with ncu_report: %s", shlex.join(cmd))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=DUMP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"ncu_report took over {DUMP_TIMEOUT_S} s"
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or ["exit code " + str(proc.returncode)]
                      )[-1][:300]
    try:
        return json.loads(proc.stdout), ""
    except json.JSONDecodeError:
        return None, "ncu_report's dump was not valid JSON"


def _text(path: Path) -> str:
    data = path.read_bytes()
    with reading(path):
        return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def _pages(folder: Path) -> dict[str, Path]:
    """The CSV pages of a folder, by page ("raw", "details", "source")."""
    found = {}
    for name in ("raw", "details", "source"):
        for path in (folder / f"{name}.csv", folder / f"{name}.csv.gz"):
            if path.is_file():
                found[name] = path
                break
    return found


def _texts(pages: dict[str, Path]) -> tuple[str, str, str]:
    """The raw, details and source pages' text ("" for a page not there)."""
    texts = {name: _text(path) for name, path in pages.items()}
    return texts.get("raw", ""), texts.get("details", ""), texts.get("source", "")


@_at_the_boundary
def read_csv_folder(folder: Path) -> Profile:
    """A folder of CSV pages exported by `ncu --import R --csv --page raw|details|source`
    (named raw.csv, details.csv, source.csv; gzipped copies with .csv.gz work too). The raw
    page carries every metric; a details page alone carries each section's summary."""
    pages = _pages(folder)
    if "raw" not in pages and "details" not in pages:
        raise ReportError(f"{folder} has neither raw.csv nor details.csv (the pages of "
                          "`ncu --import R --csv --page raw|details|source`)")
    return _from_pages(*_texts(pages), str(folder), pages)


@_at_the_boundary
def read_csv_file(path: Path) -> Profile:
    """One exported page: the raw page (every metric) or the details page (summaries and
    rules), told apart by its header, in base or display units."""
    text = _text(path)
    kind = csv_reader.page_kind(text)
    if kind not in ("raw", "details"):
        raise ReportError(f"{path}: not an ncu CSV raw or details page (export one with "
                          "`ncu --import R --csv --page raw` or `--page details`)")
    return _from_pages(text if kind == "raw" else "", text if kind == "details" else "", "",
                       str(path))


def _from_pages(raw: str, details: str, source: str, where: str,
                files: dict[str, Path] | None = None) -> Profile:
    try:
        dump = csv_reader.dump_pages(raw, details, source, where)
    except (ValueError, csv.Error) as exc:
        raise ReportError(f"{_page_file(exc, where, files)}: {exc}") from None
    profile = normalize.from_raw(dump)
    if not profile.kernels:
        raise _no_launch_rows(where)
    return profile


def _no_launch_rows(where: str) -> ReportError:
    return ReportError(f"{where}: the CSV pages have their header but no launch rows: a "
                       "report that profiled no kernel, or an export cut short")


def _page_file(exc: Exception, where: str, files: dict[str, Path] | None) -> str:
    """The file a page's error is about: the page's own file in a folder, else `where`."""
    page = exc.page if isinstance(exc, csv_reader.PageError) else ""
    return str((files or {}).get(page, where))


def _read_json(path: Path) -> Profile:
    """A profile.json (or .json.gz) that `profile` wrote, or a raw dump of ncu_dump."""
    try:
        data = json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path} is not valid JSON: {exc}") from None
    try:
        if isinstance(data, dict) and "schema" in data:
            return profile_from_json(data)
        if isinstance(data, dict) and "kernels" in data and "reader" in data:
            return normalize.from_raw(data)
    except MALFORMED as exc:
        raise ReportError(f"{path}: not a pragma-ncu profile ({_reason(exc)})") from None
    raise ReportError(f"{path}: neither a profile.json nor a raw dump (a JSON "
                      f"{type(data).__name__} without 'schema', or 'kernels' and 'reader')")


@_at_the_boundary
def read_launches(path: Path, settings: Settings, reader: str = "auto") -> Launches:
    """Every launch of a report with only the metrics grouping needs, and the full profile
    of any launch on demand (pragma_ncu.profile.launches): what triage of an application of
    thousands of launches reads. Accepts what read_report accepts; the full profiles loaded
    later answer bad input the same way."""
    found = _launches(path, settings, reader)
    return replace(found, load=_guarded_loader(path, found.load))


def _guarded_loader(path: Path, load: launches.Loader) -> launches.Loader:
    def guarded(wanted: tuple[int, ...]) -> tuple[KernelProfile, ...]:
        with reading(path):
            return load(wanted)
    return guarded


def _launches(path: Path, settings: Settings, reader: str) -> Launches:
    if not path.exists():
        raise ReportError(f"no such report: {path}")
    if path.is_dir():
        pages = _pages(path)
        if "raw" not in pages and "details" not in pages:
            return Launches.of(read_csv_folder(path))  # raises the folder's message
        return _csv_launches(*_texts(pages), str(path), pages)
    if path.name.endswith((".json", ".json.gz")):
        return Launches.of(_read_json(path))
    if path.name.endswith((".csv", ".csv.gz")):
        kind = csv_reader.page_kind(_text(path))
        if kind == "raw":
            return _csv_launches(_text(path), "", "", str(path))
        return Launches.of(read_csv_file(path))
    _check_ncu_rep(path)
    return _report_launches(path, settings, reader)


def _csv_launches(raw: str, details: str, source: str, where: str,
                  files: dict[str, Path] | None = None) -> Launches:
    try:
        found = launches.csv_launches(raw, details, source, where)
    except (ValueError, csv.Error) as exc:
        raise ReportError(f"{_page_file(exc, where, files)}: {exc}") from None
    if not found.profile.kernels:
        raise _no_launch_rows(where)
    return found


def _report_launches(path: Path, settings: Settings, reader: str) -> Launches:
    """A .ncu-rep: ncu_report's light pass, then full actions on demand; else the CSV pages
    ncu exports (parsed light the same way)."""
    try:
        ncu = find_ncu(settings)
    except ToolchainError as exc:
        raise ToolchainError(f"reading {path.name} needs Nsight Compute: {exc}. Without ncu, "
                             "give a profile.json or a folder of CSV exports instead") from None
    notes: list[str] = []
    if reader in ("auto", "ncu_report") and ncu.python_dir is not None:
        light, why = dump_with_ncu_report(path, ncu.python_dir, settings.python, "--light",
                                          ",".join(launches.LIGHT_METRICS))
        if light is not None and light.get("kernels"):
            profile = normalize.from_raw(light, None, ncu.version)
            return Launches(profile, _ncu_report_loader(path, ncu, settings))
        notes.append(why or f"{path} holds no profiled kernel")
    elif reader in ("auto", "ncu_report"):
        notes.append("ncu_report not found in the ncu install (set PRAGMA_NCU_NCU_PYTHON)")
    if reader == "ncu_report":
        raise ReportError("; ".join(notes))
    try:
        pages = [csv_reader.run_ncu(csv_reader.page_command(ncu.path, str(path), p))
                 for p in ("raw", "details")]
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        raise ReportError(f"cannot read {path}: " + "; ".join([*notes, f"ncu --import: {exc}"])
                          ) from None
    found = _csv_launches(pages[0], pages[1], "", str(path))
    return replace(found, profile=replace(found.profile, ncu_version=ncu.version))


def _ncu_report_loader(path: Path, ncu: NcuInfo, settings: Settings) -> launches.Loader:
    def load(wanted: tuple[int, ...]) -> tuple[KernelProfile, ...]:
        assert ncu.python_dir is not None
        raw, why = dump_with_ncu_report(path, ncu.python_dir, settings.python, "--actions",
                                        ",".join(map(str, wanted)))
        if raw is None:
            raise ReportError(f"{path}: reading launches {list(wanted)} failed: {why}")
        raw = _complete_rules(raw, path, ncu, [])
        return normalize.from_raw(raw, None, ncu.version).kernels
    return load
