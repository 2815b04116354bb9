"""`triage` as a library call: two sides (recorded, measured now, or runs of the run store) in,
a TriageReport out."""

from __future__ import annotations

from pathlib import Path

from pragma_ncu.api.arguments import checked
from pragma_ncu.api.common import load, settings_or_default, shapes_of
from pragma_ncu.backends.base import ProfileOptions
from pragma_ncu.infra import sources
from pragma_ncu.infra.bounds import Percent, Repeats, Seconds
from pragma_ncu.infra.progress import Notice, Progress, logged, notes
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.store import DEFAULT_NAME
from pragma_ncu.knowledge.compendium import load_compendium
from pragma_ncu.spec.model import ParamValue, TaskSpec
from pragma_ncu.triage.engine import DEFAULT_THRESHOLD_PCT, check_threshold
from pragma_ncu.triage.engine import triage as compare
from pragma_ncu.triage.load import is_source, measure_side, read_side
from pragma_ncu.triage.report import Side, TriageReport


@checked
def triage(base: str | Path, new: str | Path, *, threshold: Percent = DEFAULT_THRESHOLD_PCT,
           kernel: str | None = None, by_order: bool = False, reader: str = "auto",
           spec: Path | None = None, shape: str | None = None,
           params: dict[str, ParamValue] | None = None, arch: str | None = None,
           repeats: Repeats = 3, out: Path = Path("pragma-ncu-triage"), timeout: Seconds = 180.0,
           store: Path = Path(DEFAULT_NAME), settings: Settings | None = None,
           progress: Progress | None = None) -> TriageReport:
    """Compare BASE with NEW kernel by kernel: what the application lost, and why (see
    docs/triage.md). Each side is a .ncu-rep, a profile .json(.gz), a folder of ncu CSV pages,
    `run:ID` of the run store `store`, or a kernel (a source with its spec, `spec` or the .toml
    beside it, or a .toml spec) profiled and timed now at `shape` with `params`, then timed
    `repeats` more times. `kernel` narrows to one kernel (or pairs OLD=NEW). Raises
    TriageError (a PragmaError) for a bad side or nothing in common, UsageError for a
    threshold that is not a finite percentage (checked before any side is read)."""
    check_threshold(threshold)
    settings = settings_or_default(settings)
    options = ProfileOptions(params=dict(params or {}), arch=arch, source=True,
                             timeout_s=timeout, repeats=repeats)
    sides = [_side(str(target), role, spec, shape, options, out, reader, store, settings,
                   notes(logged(progress))) for role, target in (("BASE", base), ("NEW", new))]
    return compare(sides[0], sides[1], load_compendium(settings), threshold_pct=threshold,
                   kernel=kernel, by_order=by_order)


def _side(target: str, role: str, spec: Path | None, shape: str | None,
          options: ProfileOptions, out: Path, reader: str, store: Path, settings: Settings,
          progress: Notice) -> Side:
    if not is_source(target):
        return read_side(target, role, settings, reader, store)
    task = _task(Path(target), spec)
    chosen = shapes_of(task, (shape,) if shape else ())[0]
    return measure_side(task, chosen, role, settings, options, progress, out)


def _task(target: Path, spec: Path | None) -> TaskSpec:
    """The spec of a kernel side: a .toml names its kernel; a source uses `spec` or the .toml
    beside it."""
    sources.require_file(target)
    return load(target, None if target.suffix == ".toml" else spec)
