"""The two sides of a triage: read from a report, a profile or a folder, or measured now.

A side is one of:
- a `.ncu-rep` (read through ncu_report or ncu's CSV pages, see pragma_ncu.profile.read);
- a profile `.json` (or `.json.gz`) written by `pragma-ncu profile`, or a raw dump;
- a folder: CSV pages exported by `ncu --import R --csv` (raw.csv, details.csv, source.csv, or
  gzipped), else a `profile.json(.gz)`, else the only `*.profile.json` or `*.ncu-rep` in it
  (a `pragma-ncu profile --out` folder);
- a kernel (`.cu` with its spec, or a `.toml` spec) profiled now and timed repeatedly by its
  target (ncu on the GPU; a C/C++ kernel on the CPU, profiled with perf or cachegrind);
- `run:ID` (or `run:last`): a `tune` run of the run store, by the profile of its historical
  best after its last finished round (the profile.json the loop saved when it profiled that
  kernel at the run's first timed shape).

Repeated timings travel in a `timing.json` beside the profile: `<stem>.timing.json` for a file
`<stem>.ncu-rep` / `<stem>.profile.json` / `<stem>.json`, else `timing.json` in the same folder
(for a folder side, `timing.json` inside it). Its format:
    {"schema": 1, "timings": [{"kernel": NAME, "runs": [TimingStats fields, ...]}, ...], ...}
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from pragma_ncu import backends
from pragma_ncu.backends.base import ProfileOptions
from pragma_ncu.infra.errors import KernelFailure, PragmaError, ToolchainError
from pragma_ncu.infra.progress import Notice
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.store import DEFAULT_NAME, Store, StoreError
from pragma_ncu.measure.records import RoundRecord
from pragma_ncu.measure.stats import TimingStats
from pragma_ncu.profile.demangle import demangle
from pragma_ncu.profile.launches import Launches
from pragma_ncu.profile.read import MALFORMED, read_launches
from pragma_ncu.spec.model import Shape, TaskSpec, source_suffixes
from pragma_ncu.triage.report import TIMING_SCHEMA, Side, Timing, TriageError, timing_from_json

RUN_PREFIX = "run:"
_STEM_SUFFIXES = (".profile.json.gz", ".profile.json", ".json.gz", ".json", ".ncu-rep")
ACCEPTED = ("a .ncu-rep, a profile .json (or .json.gz), a folder of ncu CSV pages, or a kernel "
            "(.cu, .c or .cpp with its spec, or a .toml spec)")


def is_source(target: str) -> bool:
    """Whether the side is a kernel to profile now rather than a recorded profile."""
    return Path(target).suffix in (".toml", *source_suffixes())


def read_side(target: str, label: str, settings: Settings, reader: str = "auto",
              store: Path = Path(DEFAULT_NAME)) -> Side:
    """A recorded side (report, profile, folder, a run of `store`) with the timing.json found
    beside it. Its launches are read light (names, durations, launches); full profiles on
    demand."""
    if target.startswith(RUN_PREFIX):
        return run_side(target, label, settings, store)
    path = Path(target)
    if not path.exists():
        raise TriageError(f"{label}: no such file or folder: {path}")
    try:
        if path.is_dir():
            launches, kind, source = _read_folder(path, settings, reader)
        else:
            launches = _read_file(path, label, settings, reader)
            kind, source = _kind(path), path
    except TriageError:
        raise  # already names the side and the file
    except ToolchainError as exc:  # the environment's (no ncu for a .ncu-rep): exit 3
        raise ToolchainError(_named(label, path, exc)) from None
    except (PragmaError, *MALFORMED) as exc:
        raise TriageError(_named(label, path, exc)) from None
    if not launches.profile.kernels:
        raise TriageError(f"{label} {path}: the profile holds no kernel")
    launches, notes = demangled(launches, settings)
    sidecar = timing_path(source if source.is_file() else path)
    timings = read_timings(sidecar) if sidecar is not None else ()
    return Side(str(path), kind, launches.profile, timings, notes, launches)


def _named(label: str, path: Path, exc: Exception) -> str:
    """The side's label before a reader's message, and the file where it does not name it."""
    text = str(exc)
    return f"{label}: {text}" if text.startswith(str(path)) else f"{label} {path}: {text}"


def demangled(launches: Launches, settings: Settings) -> tuple[Launches, tuple[str, ...]]:
    """Readable names for a report that carries mangled symbols only (a raw CSV page
    exported with --print-kernel-base mangled and no details page)."""
    bare = {k.mangled for k in launches.profile.kernels
            if k.mangled.startswith("_Z") and k.display_name in ("", k.mangled)}
    if not bare:
        return launches, ()
    names = demangle(bare, settings.cxxfilt)
    if len(names) == len(bare):
        return launches.renamed(names), ()
    return launches.renamed(names), (
        f"{len(bare) - len(names)} kernel names left mangled: no C++ demangler (c++filt) "
        "worked; set PRAGMA_NCU_CXXFILT, or export the details page beside the raw page",)


def _kind(path: Path) -> str:
    return "ncu-rep" if path.suffix == ".ncu-rep" else "profile-json"


def _read_file(path: Path, label: str, settings: Settings, reader: str) -> Launches:
    if path.name.endswith((".json", ".json.gz", ".ncu-rep")):
        return read_launches(path, settings, reader)
    raise TriageError(f"{label} {path}: not a report: expected {ACCEPTED}")


def _read_folder(folder: Path, settings: Settings, reader: str) -> tuple[Launches, str, Path]:
    """CSV pages first (what `explain` reads too), then a profile.json, then a lone
    *.profile.json or *.ncu-rep."""
    if any((folder / n).is_file() for n in ("raw.csv", "raw.csv.gz")):
        return read_launches(folder, settings), "csv-folder", folder
    for name in ("profile.json.gz", "profile.json"):
        if (folder / name).is_file():
            path = folder / name
            return _read_file(path, "", settings, reader), "profile-json", path
    for pattern in ("*.profile.json", "*.ncu-rep"):
        found = sorted(folder.glob(pattern))
        if len(found) == 1:
            return _read_file(found[0], "", settings, reader), _kind(found[0]), found[0]
    raise ValueError("no report in this folder: expected raw.csv (ncu CSV pages), "
                     "profile.json, or one *.profile.json or *.ncu-rep")


def timing_path(path: Path) -> Path | None:
    """The timing.json that goes with a profile file or folder, if there is one."""
    if path.is_dir():
        candidates = [path / "timing.json"]
    else:
        stem = next((path.name[: -len(s)] for s in _STEM_SUFFIXES if path.name.endswith(s)),
                    path.stem)
        candidates = [path.parent / f"{stem}.timing.json", path.parent / "timing.json"]
    return next((c for c in candidates if c.is_file()), None)


def read_timings(path: Path) -> tuple[Timing, ...]:
    """The timings in a timing.json (see the module docstring)."""
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or data.get("schema") != TIMING_SCHEMA:
            raise ValueError(f"expected {{'schema': {TIMING_SCHEMA}, 'timings': [...]}}")
        return tuple(timing_from_json(t, str(path.name)) for t in data["timings"])
    except MALFORMED as exc:
        raise TriageError(f"{path}: not a usable timing.json ({type(exc).__name__}: {exc})"
                          ) from None


def write_timings(path: Path, timings: tuple[Timing, ...], **info: Any) -> None:
    """Save timings as a timing.json (`info`: shape, device, ... kept for the reader)."""
    data = {"schema": TIMING_SCHEMA, **info,
            "timings": [{"kernel": t.kernel, "runs": [_stats_json(r) for r in t.runs]}
                        for t in timings]}
    path.write_text(json.dumps(data, indent=1) + "\n")


def _stats_json(stats: TimingStats) -> dict[str, Any]:
    return {name: getattr(stats, name) for name in TimingStats.__dataclass_fields__}


def run_side(target: str, label: str, settings: Settings, store: Path) -> Side:
    """`run:ID` (`run:last`): the historical best of a tune run after its last finished round,
    by the profile the loop saved of it (judged by its durations there, like any single
    profile: the run's re-test times are named in the side's note)."""
    wanted = target[len(RUN_PREFIX):]
    if not store.is_file():
        raise TriageError(f"{label} {target}: no run store at {store} (`pragma-ncu tune` "
                          "creates it; the store is .pragma-ncu/runs.sqlite by default)")
    try:
        with Store.open(store) as db:
            run = db.resolve(wanted or "last")
            records = [RoundRecord.from_json(r) for _, _, r in db.decisions(run.id)]
    except StoreError as exc:
        raise TriageError(f"{label} {target}: {exc}") from None
    except MALFORMED as exc:  # a record the store holds that is not a round's
        raise TriageError(f"{label} {target}: the run store's records of this run cannot be "
                          f"read ({type(exc).__name__}: {exc})") from None
    best = records[-1].best_after if records else None
    if best is None:
        raise TriageError(f"{label} {target}: run {run.id} finished no round yet")
    path = Path(best.profile_path) if best.profile_path else None
    if path is None or not path.is_file():
        raise TriageError(f"{label} {target}: the historical best of run {run.id} (round "
                          f"{best.round}, {best.variant}) has no profile on disk"
                          + (f" ({path} is gone)" if path else " (it was never profiled)"))
    launches = _read_file(path, label, settings, "auto")
    times = ", ".join(f"{shape} {us:.2f} µs" for shape, us in best.times_us.items())
    note = (f"run {run.id}: the historical best (round {best.round}, {best.variant} at "
            f"{best.params}), profiled at {best.profile_shape or 'its first timed shape'}"
            + (f"; re-tested at {times}" if times else ""))
    return Side(target, "run", launches.profile, (), (note,), launches)


def _side_error(kind: type[PragmaError], message: str) -> PragmaError:
    """A side measured now that fails: the environment's failure stays one (exit 3); a
    kernel that does not build or verify is a side triage cannot compare (exit 2), never a
    regression."""
    return ToolchainError(message) if issubclass(kind, ToolchainError) else TriageError(message)


def measure_side(spec: TaskSpec, shape: Shape, label: str, settings: Settings,
                 options: ProfileOptions, progress: Notice = lambda _: None,
                 out_dir: Path = Path("pragma-ncu-triage")) -> Side:
    """Profile the kernel of `spec` at `shape` with its target's collector (verified first;
    source counters on where the collector has them) and time it `options.repeats` more times;
    keeps profile.json and timing.json in out_dir/<label>-<kernel file>-<shape> so the side
    can be re-used as a folder."""
    out = out_dir / f"{label.lower()}-{spec.source_path.stem}-{shape.name}"
    target = backends.target_for(spec)
    try:
        run = target.profile(spec, shape, settings, replace(options, out_dir=out),
                             lambda message: progress(f"{label}: {message}"))
    except PragmaError as exc:
        raise _side_error(type(exc), f"{label}: {exc}") from None
    if run.profile is None:
        kind = run.failure_kind()
        raise _side_error(kind or KernelFailure,
                          f"{label}: cannot profile {spec.source_path}: {run.problem}")
    timing = Timing(run.profile.kernels[0].name, tuple(run.timings), "measured now")
    write_timings(out / "timing.json", (timing,), shape=shape.name, params=run.params,
                  device=run.device_name)
    return Side(str(spec.source_path), "kernel", run.profile, (timing,),
                (f"{run.note()}; kept in {out}",))
