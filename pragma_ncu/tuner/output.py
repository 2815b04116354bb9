"""Writing a search's results: the instantiated best kernels, results.json, evaluations.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

from pragma_ncu.coder import template
from pragma_ncu.spec import TaskSpec
from pragma_ncu.task import read_source
from pragma_ncu.tuner.model import SearchResult


def write_results(result: SearchResult, spec: TaskSpec, out_dir: Path) -> dict[str, Path]:
    """Files written under `out_dir`, by role."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    results = out_dir / "results.json"
    _atomic(results, json.dumps(result.to_json(), indent=1))
    written["results"] = results
    lines = "".join(json.dumps(e.to_json()) + "\n" for e in result.evaluations)
    written["evaluations"] = out_dir / "evaluations.jsonl"
    _atomic(written["evaluations"], lines)
    source = read_source(spec)
    stem = spec.source_path.name.removesuffix(".j2").removesuffix(".cu")
    best = result.best_point
    if best is not None:
        written["best"] = out_dir / f"{stem}.best.cu"
        _atomic(written["best"], template.standalone(spec, best, source))
    for shape, verdict in result.per_shape:
        chosen = verdict.chosen
        if chosen is not None and chosen != best:
            path = out_dir / f"{stem}.best.{_safe(shape)}.cu"
            _atomic(path, template.standalone(spec, chosen, source))
            written[f"best:{shape}"] = path
    return written


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
