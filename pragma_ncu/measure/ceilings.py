"""A device's ceilings, measured once by the worker (pragma_ncu.pool.ceilings) and cached per
device and driver: the copy bandwidth (ceilings.json) and each compute unit's rate
(compute_ceilings.json); and the datasheet's rates, for comparison."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from pragma_ncu.measure.roofline import DATASHEET_KEYS


class Datasheet(Protocol):
    """A GPU's datasheet figures (knowledge.schema.GpuSpec)."""

    @property
    def values(self) -> Mapping[str, float]: ...


class Datasheets(Protocol):
    """Where datasheets are looked up by GPU name (knowledge.compendium.Compendium)."""

    def gpu(self, name_or_arch: str) -> Datasheet | None: ...



@dataclass(frozen=True)
class Ceiling:
    gbps: float
    method: str
    methods: dict[str, float]
    device: str
    measured_at: str
    cached: bool = False


def write_cache(cache_file: Path, cache: dict) -> None:
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache, indent=1))
    tmp.replace(cache_file)


def cached_for_device(cache_file: Path, device_name: str) -> Ceiling | None:
    """The newest ceiling measured on a device of this name (any driver), for a report made
    elsewhere: a user's report names its GPU, and this machine may have measured one alike."""
    found = [v for v in read_cache(cache_file).values()
             if isinstance(v, dict) and v.get("device") == device_name and v.get("gbps")]
    if not found:
        return None
    newest = max(found, key=lambda v: str(v.get("measured_at", "")))
    return Ceiling(**{**newest, "cached": True})


def read_cache(path: Path) -> dict:
    """A ceilings cache file's entries by device key ({} when missing or unreadable)."""
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, json.JSONDecodeError):
        return {}


@dataclass(frozen=True)
class ComputeCeiling:
    """Measured operations per second of each compute unit (peaks.cu), and the vendor GEMM's
    TFLOP/s for reference; `per_second` keys are roofline.COMPUTE_KINDS' units."""

    per_second: dict[str, float]
    vendor_tflops: dict[str, float]
    device: str
    measured_at: str
    cached: bool = False


def cached_compute(cache_file: Path, key: str) -> ComputeCeiling | None:
    """The compute ceilings cached for one device (its cache key: device and driver), or
    None when they were never measured here."""
    entry = read_cache(cache_file).get(key)
    return ComputeCeiling(**{**entry, "cached": True}) if isinstance(entry, dict) else None


def cache_compute(cache_file: Path, key: str, ceiling: ComputeCeiling) -> None:
    """Keep a device's measured compute ceilings under its cache key."""
    cache = read_cache(cache_file)
    cache[key] = {k: v for k, v in asdict(ceiling).items() if k != "cached"}
    write_cache(cache_file, cache)


def cached_compute_for_device(cache_file: Path, device_name: str) -> ComputeCeiling | None:
    """The newest compute ceilings measured on a device of this name (any driver)."""
    found: list[dict[str, Any]] = [v for v in read_cache(cache_file).values()
                                   if isinstance(v, dict) and v.get("device") == device_name]
    if not found:
        return None
    newest = max(found, key=lambda v: str(v.get("measured_at", "")))
    return ComputeCeiling(**{**newest, "cached": True})


def datasheet_for(device_name: str, knowledge: Datasheets) -> dict[str, float]:
    """The datasheet's rates of this GPU (knowledge/hardware.toml), keyed like the measured
    ones: TFLOP/s per compute unit and `copy_gbps` (its DRAM bandwidth); {} for a GPU not
    listed."""
    spec = knowledge.gpu(device_name)
    if spec is None:
        return {}
    sheet = {key: float(spec.values[name]) for key, name in DATASHEET_KEYS.items()
             if name in spec.values}
    if "dram_gbps" in spec.values:
        sheet["copy_gbps"] = float(spec.values["dram_gbps"])
    return sheet
