"""Writing a search's results: the instantiated best kernels, results.json, evaluations.jsonl,
and the per-shape winners in the device's config table (see `table`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pragma_ncu import kernel_template as template
from pragma_ncu import sources
from pragma_ncu.search import table as tables
from pragma_ncu.search.results import SearchResult
from pragma_ncu.spec import Shape, TaskSpec
from pragma_ncu.task import read_source


def write_results(result: SearchResult, spec: TaskSpec, out_dir: Path,
                  shapes: Sequence[Shape] = (), configs: Path | None = None) -> dict[str, Path]:
    """Files written under `out_dir`, by role; the per-shape winners also go to the config
    table under `configs` (default `out_dir/configs`), `shapes` giving the tuned shapes' dims
    (those of the spec by default)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    results = out_dir / "results.json"
    _atomic(results, json.dumps(result.to_json(), indent=1))
    written["results"] = results
    lines = "".join(json.dumps(e.to_json()) + "\n" for e in result.evaluations)
    written["evaluations"] = out_dir / "evaluations.jsonl"
    _atomic(written["evaluations"], lines)
    source = read_source(spec)
    name = Path(spec.source_path.name.removesuffix(".j2"))  # x.cu, x.cpp
    stem, ext = name.stem, name.suffix
    best = result.best_point
    if best is not None:
        written["best"] = out_dir / f"{stem}.best{ext}"
        _atomic(written["best"], template.standalone(spec, best, source))
    for shape, verdict in result.per_shape:
        chosen = verdict.chosen
        if chosen is not None and chosen != best:
            path = out_dir / f"{stem}.best.{_safe(shape)}{ext}"
            _atomic(path, template.standalone(spec, chosen, source))
            written[f"best:{shape}"] = path
    table = write_table([result], spec, configs or out_dir / "configs", shapes)
    if table is not None:
        written["table"] = table
    return written


def write_table(results: Sequence[SearchResult], spec: TaskSpec, root: Path,
                shapes: Sequence[Shape] = ()) -> Path | None:
    """Add every result's per-shape choices to the table of its kernel and device."""
    known = {s.name: s for s in (*spec.shapes, *shapes)}
    entries = [e for r in results for e in table_entries(r, known)]
    if not entries:
        return None
    dims = list(entries[0].dims)
    device = next((r.device for r in results if r.device), "") or "unknown-device"
    return tables.update_table(root, spec.kernel_name, device, dims, entries)


def table_entries(result: SearchResult, shapes: dict[str, Shape]) -> list[tables.Entry]:
    """The configuration chosen at each tuned shape: the re-tested winner when it beat the
    incumbent beyond the noise, else the incumbent."""
    out = []
    for name, verdict in result.per_shape:
        chosen = verdict.chosen
        pick = verdict.winner if verdict.accepted else verdict.incumbent
        at = pick.at(name) if pick is not None else None
        if chosen is None or name not in shapes:
            continue
        out.append(tables.Entry(
            params=dict(chosen), dims=shapes[name].as_dict(),
            median_us=round(at.median_us, 3) if at else None,
            noise_pct=round(at.noise_pct, 2) if at else None,
            speedup=round(verdict.speedup, 3) if verdict.accepted and verdict.speedup else 1.0,
            shape=name, accepted=verdict.accepted))
    return out


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _atomic(path: Path, text: str) -> None:
    sources.write(path, text)  # a kernel's bytes as read (JSON is ASCII: the same either way)
