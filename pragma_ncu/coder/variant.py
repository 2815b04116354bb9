"""A variant: one version of the kernel's source plus what the spec needs to tune it.

The original kernel, a re-tuned parameter range and an LLM's rewrite are all variants: the
source text, its file name (`.cu`, or `.cu.j2` for a jinja2 template) and an *overlay* of spec
tables (`params`, `launch`, `kernel.template_args`, `tune.restrictions`) laid over the user's
spec. Everything else (arguments, shapes, tolerance, reference) stays the user's, so every
variant is verified against the same reference at the same shapes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pragma_ncu.infra import sources
from pragma_ncu.spec.file import parse_spec
from pragma_ncu.spec.model import TaskSpec


@dataclass(frozen=True)
class Variant:
    name: str  # short label for traces: "original", "retune 2", "llm rewrite 3"
    filename: str  # "silu_and_mul.cu" or "silu_and_mul.cu.j2"
    source: str
    overlay: dict[str, Any] = field(default_factory=dict)
    origin: str = "original"  # original | retune | llm
    note: str = ""  # what changed and why, in a sentence

    @property
    def source_hash(self) -> str:
        return sources.digest(self.source)[:16]

    @property
    def key(self) -> str:
        """Source and overlay: two variants with the same key tune the same space."""
        text = self.source + repr(sorted(_flat(self.overlay)))
        return sources.digest(text)[:16]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "filename": self.filename, "source": self.source,
                "overlay": self.overlay, "origin": self.origin, "note": self.note,
                "source_hash": self.source_hash}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Variant:
        return Variant(data["name"], data["filename"], data["source"],
                       dict(data.get("overlay") or {}), data.get("origin", "original"),
                       data.get("note", ""))


def original_variant(spec: TaskSpec) -> Variant:
    """The user's kernel as it is, with the user's spec."""
    return Variant("original", spec.source_path.name, sources.read(spec.source_path))


def merged_spec_data(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """The user's spec tables with the overlay's laid over them. `params` and `launch` replace
    the user's tables whole (a rewrite declares its own knobs); `kernel` and `tune` merge key by
    key (a rewrite keeps the kernel's name and flags unless it says otherwise)."""
    data = copy.deepcopy(base)
    for table, value in overlay.items():
        if table in ("params", "launch"):
            data[table] = copy.deepcopy(value)
        else:
            data[table] = {**data.get(table, {}), **copy.deepcopy(value)}
    return data


def variant_spec(base: dict[str, Any], variant: Variant, spec_path: Path,
                 workdir: Path) -> TaskSpec:
    """The TaskSpec of `variant`: its source written (content-addressed) under `workdir`, the
    spec parsed from the merged tables, so a bad overlay fails as a SpecError naming the field."""
    path = workdir / variant.source_hash / variant.filename
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        sources.write(path, variant.source)
    return parse_spec(merged_spec_data(base, variant.overlay), spec_path, kernel_path=path)


def _flat(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [kv for k, v in value.items() for kv in _flat(v, f"{prefix}.{k}")]
    return [(prefix, repr(value))]
