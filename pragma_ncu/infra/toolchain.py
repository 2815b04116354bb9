"""Discovery of the CUDA toolchain: nvcc, ncu and its Python report module.

Hardware facts about the GPU come from the worker (`hello`), which is the only process that opens
the device; this module only finds tools on the host and asks them their versions.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from pragma_ncu.infra.errors import ToolchainError
from pragma_ncu.infra.settings import Settings

_NCU_REPORT = "extras/python/ncu_report.py"
DEFAULT_ARCH = "sm_90"  # what kernels compile for where no GPU says its own


@dataclass(frozen=True)
class Check:
    """One thing `doctor` looked for on this machine: found or not, what, and the fix."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class NvccInfo:
    path: str
    version: str  # e.g. "13.0.88"
    banner: str  # the full `nvcc --version` text, part of the build cache key
    environment: tuple[tuple[str, str], ...] = ()  # Settings.compiler_env: in the cache key


@dataclass(frozen=True)
class NcuInfo:
    path: str
    version: str
    install_dir: Path | None
    python_dir: Path | None  # folder holding ncu_report.py, if found


def find_nvcc(settings: Settings) -> NvccInfo:
    """The nvcc from the settings, with its version; ToolchainError says how to get one."""
    if not settings.nvcc:
        raise ToolchainError(
            "nvcc not found: install the CUDA toolkit and put its bin/ on PATH, "
            "or set PRAGMA_NCU_NVCC=/path/to/nvcc"
        )
    return replace(_nvcc_info(settings.nvcc), environment=settings.compiler_env)


@lru_cache(maxsize=8)
def _nvcc_info(path: str) -> NvccInfo:
    banner = _run_version(path, "nvcc")
    match = re.search(r"V(\d+\.\d+\.\d+)", banner) or re.search(r"release (\d+\.\d+)", banner)
    return NvccInfo(path, match.group(1) if match else "unknown", banner.strip())


def find_ncu(settings: Settings) -> NcuInfo:
    """The ncu from the settings, its version, install folder and ncu_report location."""
    if not settings.ncu:
        raise ToolchainError(
            "ncu (Nsight Compute) not found: install it (it ships with the CUDA toolkit) and put "
            "it on PATH, or set PRAGMA_NCU_NCU=/path/to/ncu"
        )
    banner = _run_version(settings.ncu, "ncu")
    match = re.search(r"Version (\d[\d.]*)", banner)
    install = ncu_install_dir(Path(settings.ncu))
    python_dir = settings.ncu_python_dir
    if python_dir is None and install is not None and (install / _NCU_REPORT).is_file():
        python_dir = (install / _NCU_REPORT).parent
    return NcuInfo(settings.ncu, match.group(1) if match else "unknown", install, python_dir)


def ncu_install_dir(ncu: Path) -> Path | None:
    """The Nsight Compute install folder behind an `ncu` (which is often a symlink or wrapper)."""
    real = ncu.resolve()
    candidates = [real.parent, real.parent.parent]
    # /usr/local/cuda/bin/ncu is often a script that runs /opt/nvidia/nsight-compute/<ver>/ncu
    try:
        text = real.read_text(errors="replace")[:4096] if real.stat().st_size < 65536 else ""
    except OSError:
        text = ""
    for match in re.finditer(r"(/[\w./-]*nsight-compute[\w./-]*)", text):
        candidates += [Path(match.group(1)), Path(match.group(1)).parent]
    candidates += sorted(Path("/opt/nvidia/nsight-compute").glob("*"), reverse=True)
    candidates += sorted(real.parent.parent.glob("nsight-compute*"), reverse=True)
    for candidate in candidates:  # the install holds both sections/ and extras/python/
        if (candidate / "sections").is_dir() and (candidate / _NCU_REPORT).is_file():
            return candidate
    for candidate in candidates:
        if (candidate / "sections").is_dir():
            return candidate
    return None


def _run_version(path: str, what: str) -> str:
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"{what} at {path} could not run: {exc}") from None
    if proc.returncode != 0:
        raise ToolchainError(f"{what} at {path} failed: {proc.stderr.strip()[:500]}")
    return proc.stdout


def arch_flag(compute_capability: str) -> str:
    """'9.0' or '90' or 'sm_90a' -> 'sm_90' / 'sm_90a' (the nvcc -arch value)."""
    cc = compute_capability.strip().lower().removeprefix("sm_").replace(".", "")
    if not re.fullmatch(r"\d{2,3}[af]?", cc):
        raise ToolchainError(f"not a compute capability: {compute_capability!r} (e.g. 9.0, sm_90a)")
    return f"sm_{cc}"


def target_arch(asked: str | None, device_arch: str | None = None) -> str:
    """The arch to compile for: the one asked for (any spelling arch_flag takes), else the
    device's, else DEFAULT_ARCH."""
    return arch_flag(asked) if asked else (device_arch or DEFAULT_ARCH)
