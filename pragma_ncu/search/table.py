"""Per-shape results as the table an application loads at run time: one JSON file per device
and kernel, keyed by shape, with what the re-test measured beside each configuration (the
layout vLLM and SGLang read is `vllm_table`'s; `configs.best_config` reads both).

    configs/<kernel>/<device>.json          e.g. configs/sgemm_space/NVIDIA_H200.json
    {"format": 1, "kernel": "sgemm_space", "device": "NVIDIA H200", "dims": ["M", "N", "K"],
     "updated": "2026-11-24 10:00:00",
     "configs": {"M=4096,N=4096,K=4096": {"params": {"BM": 128, ...}, "median_us": 2712.4,
                                          "noise_pct": 0.8, "speedup": 1.42, "shape": "4096",
                                          "accepted": true}, ...}}

`lookup` (and `configs.best_config`) answers the configuration tuned for a shape or, when that
shape was not tuned, for the nearest tuned one: the smallest distance in log space,
sqrt(sum((log2 a - log2 b)^2)) over the dims (so 2048 is as near to 4096 as 8192 is), ties
going to the larger shape. A fallback configuration was verified at its own shape and the
spec's check shapes, not at the one asked for: where its correctness depends on divisibility,
verify it there (`pragma-ncu bench`).

This module needs nothing beyond the standard library, so an application can import it alone.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pragma_ncu.infra.errors import InputError

FORMAT = 1
Dims = Mapping[str, int]


class TableError(InputError, ValueError):
    """A table that cannot be read, or a shape it cannot answer; the message says why."""


@dataclass(frozen=True)
class Entry:
    """The tuned configuration of one shape."""

    params: dict[str, Any]
    dims: dict[str, int]
    median_us: float | None = None
    noise_pct: float | None = None
    speedup: float | None = None  # over the incumbent, re-tested side by side
    shape: str = ""  # the spec's name of the shape
    accepted: bool = True  # False: the incumbent was kept (nothing beat it beyond noise)


@dataclass(frozen=True)
class Table:
    kernel: str
    device: str
    dims: tuple[str, ...]
    configs: dict[str, Entry] = field(default_factory=dict)


def device_file_name(device: str) -> str:
    """'NVIDIA H200' -> 'NVIDIA_H200' (spaces and odd characters to underscores)."""
    return re.sub(r"[^\w.-]+", "_", device.strip()).strip("_") or "device"


def table_path(root: Path, kernel: str, device: str) -> Path:
    return Path(root) / kernel / f"{device_file_name(device)}.json"


def shape_key(dims: Dims, order: Sequence[str]) -> str:
    """'M=4096,N=4096,K=4096': the dims in `order`."""
    return ",".join(f"{name}={int(dims[name])}" for name in order)


def parse_dims(shape: Dims | str) -> dict[str, int]:
    """A shape as {dim: size}, from a mapping or 'M=4096,N=4096,K=4096'."""
    if isinstance(shape, str):
        try:
            pairs = [part.split("=") for part in shape.split(",") if part.strip()]
            return {name.strip(): int(value) for name, value in pairs}
        except ValueError:
            raise TableError(f"shape {shape!r}: expected NAME=INT[,NAME=INT...]") from None
    sizes = {str(k): whole_number(v) for k, v in shape.items()}
    bad = next((k for k, v in sizes.items() if v is None), None)
    if bad is not None:
        raise TableError(f"shape: {bad}={shape[bad]!r} is not a whole number")
    return {k: v for k, v in sizes.items() if v is not None}


def whole_number(value: Any) -> int | None:
    """`value` as an int when it is a whole number (4096, or 4096.0 as some writers spell
    it), else None: a size is never truncated (-3.5 is not -3)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def load_table(path: Path) -> Table:
    """The table in the file `path`; TableError for one that is not such a table, naming
    the key at fault: a dim that is not a whole number is refused, never truncated."""
    try:
        data = json.loads(Path(path).read_text())
        dims = tuple(data["dims"])
        if not all(isinstance(d, str) for d in dims):
            raise ValueError(f"'dims' must list dim names, not {data['dims']!r}")
        configs = {key: _entry(key, value, dims) for key, value in data["configs"].items()}
        return Table(str(data["kernel"]), str(data["device"]), dims, configs)
    except FileNotFoundError:
        raise TableError(f"no tuned-config table at {path}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TableError(f"{path} is not a pragma-ncu config table ({exc})") from None


def _entry(key: str, value: Any, dims: Sequence[str]) -> Entry:
    """One entry of a table file, checked: its params a mapping of names to values, its dims
    the table's, each a positive whole number (4096, or 4096.0 as some writers spell it)."""
    if not isinstance(value, dict) or not isinstance(value.get("params"), dict):
        raise ValueError(f"configs[{key!r}].params must be an object of parameter values, "
                         f"not {_short(value.get('params') if isinstance(value, dict) else value)}")
    given = value.get("dims")
    if not isinstance(given, dict) or set(given) != set(dims):
        raise ValueError(f"configs[{key!r}].dims must give {', '.join(dims)}, not {_short(given)}")
    sizes = {}
    for name in dims:
        size = whole_number(given[name])
        if size is None or size <= 0:
            raise ValueError(f"configs[{key!r}].dims.{name} must be a positive whole number, "
                             f"not {_short(given[name])}")
        sizes[name] = size
    return Entry(**{**value, "dims": sizes})


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def save_table(path: Path, table: Table) -> None:
    data = {"format": FORMAT, "kernel": table.kernel, "device": table.device,
            "dims": list(table.dims), "updated": time.strftime("%Y-%m-%d %H:%M:%S"),
            "configs": {k: asdict(v) for k, v in sorted(table.configs.items(),
                                                       key=lambda kv: _order(kv[1]))}}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def update_table(root: Path, kernel: str, device: str, dims: Sequence[str],
                 entries: Sequence[Entry]) -> Path:
    """Add (or replace) `entries` in the table of `kernel` on `device` under `root`; shapes
    tuned before and not now stay."""
    path = table_path(root, kernel, device)
    old = load_table(path) if path.is_file() else Table(kernel, device, tuple(dims))
    if set(old.dims) != set(dims):
        raise TableError(f"{path} is keyed by {list(old.dims)}, not {list(dims)}")
    configs = dict(old.configs)
    for entry in entries:
        configs[shape_key(entry.dims, old.dims)] = entry
    save_table(path, Table(kernel, device, old.dims, configs))
    return path


def lookup(table: Table, shape: Dims | str) -> tuple[Entry, bool]:
    """The entry for `shape`, and whether it was tuned at exactly that shape (else it is the
    nearest tuned shape's)."""
    dims = parse_dims(shape)
    if set(dims) != set(table.dims):
        raise TableError(f"the table of {table.kernel} on {table.device} is keyed by "
                         f"{', '.join(table.dims)}; the shape gives {', '.join(dims) or 'none'}")
    if any(v <= 0 for v in dims.values()):
        raise TableError(f"shape {shape_key(dims, table.dims)}: sizes must be positive")
    if not table.configs:
        raise TableError(f"the table of {table.kernel} on {table.device} is empty")
    exact = table.configs.get(shape_key(dims, table.dims))
    if exact is not None:
        return exact, True
    nearest = min(table.configs.values(), key=lambda e: (_distance(e.dims, dims), -_size(e)))
    return nearest, False


def _distance(a: Dims, b: Dims) -> float:
    return math.sqrt(sum((math.log2(a[k]) - math.log2(b[k])) ** 2 for k in b))


def _size(e: Entry) -> float:
    return sum(math.log2(v) for v in e.dims.values() if v > 0)


def _order(e: Entry) -> tuple[float, ...]:
    return tuple(float(v) for v in e.dims.values())
