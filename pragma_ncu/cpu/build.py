"""Compiling CPU kernels with the system compiler into shared objects.

The same `BuildRequest` / `BuildResult` nouns as nvcc builds: the request's flags and defines
come from the spec and its parameters (-O levels, -march, -ffast-math, -fopenmp are ordinary
flag parameters), `arch` is "host", and the result's `cubin_path` holds the shared object.
Builds are cached by content hash (source, local includes, flags, defines, the compiler's
identity, and the host CPU when a flag tunes for it); an error is a result, not an exception.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pragma_ncu.build import (
    BuildCache,
    BuildRequest,
    BuildResult,
    cached_build,
    local_includes,
)
from pragma_ncu.errors import ToolchainError
from pragma_ncu.settings import Settings

HOST_ARCH = "host"
COMPILE_TIMEOUT_S = 300
_CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++")


@dataclass(frozen=True)
class CompilerInfo:
    path: str
    banner: str  # the first line of `--version`, part of the cache key
    nm: str | None  # binutils' nm, to check the function is exported


def is_cxx(source_name: str) -> bool:
    return Path(source_name.removesuffix(".j2")).suffix.lower() in _CXX_SUFFIXES


def find_compiler(settings: Settings, cxx: bool) -> CompilerInfo:
    """The C (or C++) compiler from the settings; ToolchainError says how to get one."""
    path = settings.cxx if cxx else settings.cc
    if not path:
        what, var = ("C++", "CXX") if cxx else ("C", "CC")
        raise ToolchainError(f"no {what} compiler found: install gcc or clang, or set "
                             f"{var}=/path/to/compiler")
    return _info(path)


@lru_cache(maxsize=8)
def _info(path: str) -> CompilerInfo:
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"cannot run the compiler {path}: {exc}") from None
    banner = (proc.stdout or proc.stderr).strip().splitlines()
    return CompilerInfo(path, banner[0] if banner else path, shutil.which("nm"))


def cache_key(req: BuildRequest, cc: CompilerInfo) -> str:
    h = hashlib.sha256()
    native = any("native" in f for f in req.flags)  # -march=native builds for this CPU only
    parts = [req.source, req.source_name, req.kernel_name, list(req.flags), list(req.defines),
             list(req.include_dirs), cc.banner, cc.path, host_cpu() if native else ""]
    h.update(json.dumps(parts).encode())
    for path in local_includes(req.source, Path(req.source_name).parent):
        h.update(path.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def host_cpu() -> str:
    """The CPU model (for cache keys of -march=native builds and for reports)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def compile_command(req: BuildRequest, cc: CompilerInfo, src: Path, out: Path) -> list[str]:
    # -g: line tables for cachegrind's and perf's per-line counts; it does not change the code
    cmd = [cc.path, "-shared", "-fPIC", "-g", "-o", str(out)]
    cmd += [f"-D{k}={v}" for k, v in req.defines]
    folder = Path(req.source_name).parent
    cmd += [f"-I{d}" for d in (*req.include_dirs, str(folder) if str(folder) else ".")]
    cmd += list(req.flags)
    cmd.append(str(src))
    return cmd


def build(req: BuildRequest, cc: CompilerInfo, cache: BuildCache) -> BuildResult:
    """Compile one CPU kernel (or return the cached result of the same compile)."""
    key = cache_key(req, cc)
    return cached_build(key, cache, lambda tmp, entry: _compile(req, cc, key, tmp, entry))


def _compile(req: BuildRequest, cc: CompilerInfo, key: str, tmp: Path,
             entry: Path) -> BuildResult:
    name = Path(req.source_name.removesuffix(".j2")).name or "kernel.c"
    src = tmp / name
    # the line tables name the user's file, so hot lines point at something that exists
    user = str(Path(req.source_name).resolve()).replace("\\", "\\\\").replace('"', '\\"')
    src.write_text(f'#line 1 "{user}"\n' + req.source)
    cmd = compile_command(req, cc, src, tmp / "kernel.so")
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        log, rc = (proc.stdout + proc.stderr).replace(str(src), req.source_name), proc.returncode
    except subprocess.TimeoutExpired:
        log, rc = f"the compiler did not finish within {COMPILE_TIMEOUT_S} s", -1
    common: dict[str, Any] = dict(kernel_name=req.kernel_name, arch=req.arch,
                                  command=tuple(cmd), key=key,
                  seconds=time.perf_counter() - start, log=log, resources=None)
    if rc != 0:
        return BuildResult(status="compile_error", symbol=None, cubin_path=None, **common)
    exported = exported_functions(tmp / "kernel.so", cc.nm)
    if exported is not None and req.kernel_name not in exported:
        return BuildResult(status="kernel_not_found", symbol=None, cubin_path=None,
                           entries=tuple(sorted(exported)),
                           **{**common, "log": log + _not_found(req.kernel_name, exported)})
    return BuildResult(status="ok", symbol=req.kernel_name,
                       cubin_path=str(entry / "kernel.so"),
                       entries=tuple(sorted(exported or ())), **common)


def exported_functions(so: Path, nm: str | None) -> set[str] | None:
    """The functions the shared object exports (None when nm is not available)."""
    if nm is None:
        return None
    proc = subprocess.run([nm, "-D", "--defined-only", str(so)], capture_output=True,
                          text=True, timeout=60)
    if proc.returncode != 0:
        return None
    return {parts[2] for parts in (ln.split() for ln in proc.stdout.splitlines())
            if len(parts) == 3 and parts[1] in ("T", "W", "i")}


def _not_found(name: str, exported: set[str]) -> str:
    mangled = [e for e in exported if re.match(rf"_Z(?:N\w*?)?{len(name)}{re.escape(name)}", e)]
    hint = (f" It is exported only under its C++ name {mangled[0]}: declare it "
            f"extern \"C\"." if mangled else "")
    shown = ", ".join(sorted(exported)[:8]) or "none"
    return f"\nfunction {name!r} is not exported by the shared object (exported: {shown}).{hint}"
