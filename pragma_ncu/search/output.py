"""Writing a search's results: the instantiated best kernels, results.json, evaluations.jsonl,
and the per-shape winners in the device's config table (`table`'s layout, or vLLM's:
`vllm_table`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pragma_ncu.build.task import read_source
from pragma_ncu.infra import sources
from pragma_ncu.search import table as tables
from pragma_ncu.search import vllm_table
from pragma_ncu.search.results import SearchResult
from pragma_ncu.spec import template as template
from pragma_ncu.spec.model import Shape, TaskSpec

LAYOUTS = ("pragma", *vllm_table.ENGINES)


@dataclass(frozen=True)
class TableFormat:
    """The layout of the config table: this tool's own (`table`: one file per kernel and
    device, keyed by every dim, with the re-test's figures) or a serving engine's, "vllm" or
    "sglang" (`vllm_table`: one file per fixed dims and device, keyed by `batch_dim`, bare
    parameters, named as the engine's loader asks: its quantization selectors `dtype` and
    `block_shape`, its names for the fixed dims `dim_map`, SGLang's `triton_version` folder).
    `batch_dim` None: the one dim the spec's shapes vary in."""

    layout: str = "pragma"
    batch_dim: str | None = None
    dtype: str | None = None
    block_shape: tuple[int, int] | None = None
    dim_map: tuple[tuple[str, str], ...] = ()
    triton_version: str | None = None

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise vllm_table.NamingError(f"config format {self.layout!r}: expected one of "
                                         f"{', '.join(LAYOUTS)}", "--config-format")
        engine_only = {"--batch-dim": self.batch_dim, "--config-dtype": self.dtype,
                       "--block-shape": self.block_shape, "--dim-map": self.dim_map,
                       "--triton-version": self.triton_version}
        given = [name for name, value in engine_only.items() if value]
        if self.layout == "pragma" and given:
            raise vllm_table.NamingError(f"{', '.join(given)}: go with --config-format "
                                         f"{' or '.join(vllm_table.ENGINES)}",
                                         "--config-format")
        if self.layout != "pragma":
            self.naming().folder()  # SGLang's needs its Triton version

    def naming(self) -> vllm_table.Naming:
        """How the engine names the files (vllm_table.Naming)."""
        return vllm_table.Naming(self.layout, self.dtype, self.block_shape, self.dim_map,
                                 self.triton_version)

    def batch(self, spec: TaskSpec, shapes: Sequence[Shape] = ()) -> str:
        """The engine layout's batch dim for `spec`, decided from all its shapes and `shapes`
        (TableError where it cannot be), the other dims checked to name a file as the engine
        asks (E and N, or the dim map's)."""
        every = [s.as_dict() for s in (*spec.shapes, *shapes)]
        batch = vllm_table.batch_dim(every, self.batch_dim)
        self.naming().fixed({d: 1 for d in every[0] if d != batch} if every else {})
        return batch


OWN_LAYOUT = TableFormat()

def write_results(result: SearchResult, spec: TaskSpec, out_dir: Path,
                  shapes: Sequence[Shape] = (), configs: Path | None = None,
                  fmt: TableFormat = OWN_LAYOUT) -> dict[str, Path]:
    """Files written under `out_dir`, by role; the per-shape winners also go to the config
    table under `configs` (default `out_dir/configs`) in the layout `fmt` names, `shapes`
    giving the tuned shapes' dims (those of the spec by default)."""
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
    paths = write_table([result], spec, configs or out_dir / "configs", shapes, fmt)
    written.update(table_roles(paths))
    return written


def table_roles(paths: Sequence[Path]) -> dict[str, Path]:
    """'table' for the one table file written, 'table:<file name>' for each of several."""
    if len(paths) == 1:
        return {"table": paths[0]}
    return {f"table:{p.name}": p for p in paths}


def write_table(results: Sequence[SearchResult], spec: TaskSpec, root: Path,
                shapes: Sequence[Shape] = (), fmt: TableFormat = OWN_LAYOUT) -> list[Path]:
    """Add every result's per-shape choices to the table of its kernel and device: one file
    in this tool's layout; in an engine's, one per combination of the fixed dims, directly
    under `root` for vLLM (a vLLM config folder holds one kernel's files), under
    root/configs/triton_<X_Y_Z> for SGLang."""
    known = {s.name: s for s in (*spec.shapes, *shapes)}
    entries = [e for r in results for e in table_entries(r, known)]
    if not entries:
        return []
    dims = list(entries[0].dims)
    device = next((r.device for r in results if r.device), "") or "unknown-device"
    if fmt.layout == "pragma":
        return [tables.update_table(root, spec.kernel_name, device, dims, entries)]
    table = tables.Table(spec.kernel_name, device, tuple(dims),
                         {tables.shape_key(e.dims, dims): e for e in entries})
    return vllm_table.write(root, vllm_table.from_table(table, fmt.batch(spec, shapes),
                                                        fmt.naming()))


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
