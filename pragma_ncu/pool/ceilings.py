"""Measuring a device's ceilings through its worker: the copy bandwidth and each compute unit's
rate, from the cache when this device and driver were measured before (pragma_ncu.measure
.ceilings keeps the figures and the caches), and what `pragma-ncu ceilings` returns."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from pragma_ncu.measure.ceilings import (
    Ceiling,
    ComputeCeiling,
    cache_compute,
    cached_compute,
    read_cache,
    write_cache,
)
from pragma_ncu.pool.runner import Device, Runner

CEILING_BYTES = 1 << 30


def ceiling_for(runner: Runner, harness_cubin: str, cache_file: Path,
                refresh: bool = False, nbytes: int = CEILING_BYTES) -> Ceiling:
    """This device's ceiling from the cache, or measured now and cached (a CPU worker copies
    host memory and needs no harness)."""
    device = runner.hello()
    key = device.cache_key
    cache = read_cache(cache_file)
    if not refresh and key in cache:
        return Ceiling(**{**cache[key], "cached": True})
    answer = runner.call({"op": "ceiling", "harness": harness_cubin, "bytes": nbytes})
    if not answer.get("ok"):
        raise RuntimeError(f"measuring the copy ceiling failed: {answer.get('error')}")
    c = answer["ceiling"]
    result = Ceiling(gbps=c["gbps"], method=c["method"], methods=c["methods"], device=device.name,
                     measured_at=time.strftime("%Y-%m-%d %H:%M:%S"))
    cache[key] = {k: v for k, v in asdict(result).items() if k != "cached"}
    write_cache(cache_file, cache)
    return result


@dataclass(frozen=True)
class DeviceCeilings:
    """What `pragma-ncu ceilings` measured on one device: the device (its worker's DeviceInfo
    or HostInfo), its name, the copy ceiling and the compute ceilings."""

    device: Device
    name: str
    copy: Ceiling
    compute: ComputeCeiling


def compute_ceiling_for(runner: Runner, peaks_cubin: str, cache_file: Path,
                        refresh: bool = False) -> ComputeCeiling:
    """This device's compute ceilings from the cache, or measured now and cached (per device
    and driver, like the copy ceiling)."""
    device = runner.hello()
    known = None if refresh else cached_compute(cache_file, device.cache_key)
    if known is not None:
        return known
    answer = runner.call({"op": "compute_ceiling", "peaks": peaks_cubin})
    if not answer.get("ok"):
        raise RuntimeError(f"measuring the compute ceilings failed: {answer.get('error')}")
    c = answer["ceiling"]
    result = ComputeCeiling(per_second=c["per_second"], vendor_tflops=c["vendor"],
                            device=device.name, measured_at=time.strftime("%Y-%m-%d %H:%M:%S"))
    cache_compute(cache_file, device.cache_key, result)
    return result
