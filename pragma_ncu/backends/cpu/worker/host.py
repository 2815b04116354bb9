"""Facts about the host CPU the CPU worker runs on: model, cores, caches, memory.

The CPU worker's answer to "hello" (the GPU worker answers with the device's properties). Every
fact has a fallback, so a machine without /proc or /sys still gets a usable, JSON-able answer.
"""

from __future__ import annotations

import contextlib
import os
import platform
from pathlib import Path
from typing import Any

CPUINFO = Path("/proc/cpuinfo")
MEMINFO = Path("/proc/meminfo")
CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
FALLBACK_LLC_BYTES = 32 << 20
FALLBACK_L1D_BYTES = 32 << 10
FALLBACK_MEMORY_BYTES = 4 << 30  # only where neither /proc/meminfo nor sysconf answers
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def host_info() -> dict[str, Any]:
    """The host's facts as plain JSON values (the fields of `pragma_ncu.pool.runner.HostInfo`)."""
    llc, l1d = cache_sizes()
    return {
        "name": cpu_name(), "cores": cores(), "llc_bytes": llc, "l1d_bytes": l1d,
        "memory_bytes": memory_bytes(), "machine": platform.machine(),
        "kernel": platform.release(),
    }


def cpu_name(cpuinfo: Path = CPUINFO) -> str:
    """The CPU model ("model name" in /proc/cpuinfo), else what `platform` knows."""
    with contextlib.suppress(OSError):
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def cores() -> int:
    """CPUs this process may run on (its affinity mask, which a container or taskset narrows)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def parse_size(text: str) -> int:
    """'32K' -> 32768, '8M' -> 8 MiB, '512' -> 512 (the format of sysfs cache sizes)."""
    text = text.strip().upper()
    if text and text[-1] in _UNITS:
        return int(text[:-1]) * _UNITS[text[-1]]
    return int(text)


def cache_sizes(cache_dir: Path = CACHE_DIR) -> tuple[int, int]:
    """(largest cache, level-1 data cache) of CPU 0 in bytes, with fallbacks where unknown."""
    llc, l1d = 0, 0
    for index in sorted(cache_dir.glob("index*")):
        try:
            size = parse_size((index / "size").read_text())
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
        except (OSError, ValueError):
            continue
        llc = max(llc, size)
        if level == "1" and kind in ("Data", "Unified"):
            l1d = max(l1d, size)
    return llc or FALLBACK_LLC_BYTES, l1d or FALLBACK_L1D_BYTES


def memory_bytes(meminfo: Path = MEMINFO) -> int:
    """Physical memory: MemTotal from /proc/meminfo, else pages times page size."""
    with contextlib.suppress(OSError, ValueError):
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024  # reported in kB
    with contextlib.suppress(AttributeError, OSError, ValueError):
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    return FALLBACK_MEMORY_BYTES
