"""Compiling CPU kernels with the system compiler into shared objects.

The same `BuildRequest` / `BuildResult` nouns as nvcc builds: the request's flags and defines
come from the spec and its parameters (-O levels, -march, -ffast-math, -fopenmp are ordinary
flag parameters), `arch` is "host", and the result's `cubin_path` holds the shared object.
Builds are cached by content hash (source, the headers it reads, flags, defines, the compiler's
identity, and the host CPU when a flag tunes for it); an error is a result, not an exception.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from pragma_ncu.build.compile import (
    BuildCache,
    BuildRequest,
    BuildResult,
    cached_build,
    request_key,
    run_compiler,
    source_arguments,
)
from pragma_ncu.infra.errors import KernelNotFound, ToolchainError
from pragma_ncu.infra.settings import Settings

HOST_ARCH = "host"
COMPILE_TIMEOUT_S = 300
_CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++")


@dataclass(frozen=True)
class CompilerInfo:
    path: str
    banner: str  # the first line of `--version`, part of the cache key
    nm: str | None  # binutils' nm, to check the function is exported
    environment: tuple[tuple[str, str], ...] = ()  # Settings.compiler_env: in the cache key


def is_cxx(source_name: str) -> bool:
    return Path(source_name.removesuffix(".j2")).suffix.lower() in _CXX_SUFFIXES


def find_compiler(settings: Settings, cxx: bool) -> CompilerInfo:
    """The C (or C++) compiler from the settings; ToolchainError says how to get one."""
    path = settings.cxx if cxx else settings.cc
    if not path:
        what, var = ("C++", "CXX") if cxx else ("C", "CC")
        raise ToolchainError(f"no {what} compiler found: install gcc or clang, or set "
                             f"{var}=/path/to/compiler")
    return replace(_info(path), environment=settings.compiler_env)


@lru_cache(maxsize=8)
def _info(path: str) -> CompilerInfo:
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"cannot run the compiler {path}: {exc}") from None
    banner = (proc.stdout or proc.stderr).strip().splitlines()
    return CompilerInfo(path, banner[0] if banner else path, shutil.which("nm"))


def cache_key(req: BuildRequest, cc: CompilerInfo) -> str:
    native = any("native" in f for f in req.flags)  # -march=native builds for this CPU only
    return request_key([req.source, req.source_name, req.kernel_name, list(req.flags),
                        list(req.defines), list(req.include_dirs), cc.banner, cc.path,
                        list(cc.environment), host_cpu() if native else ""])


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
    return [cc.path, "-shared", "-fPIC", "-g", "-o", str(out), *source_arguments(req, src)]


def build(req: BuildRequest, cc: CompilerInfo, cache: BuildCache) -> BuildResult:
    """Compile one CPU kernel (or return the cached result of the same compile)."""
    key = cache_key(req, cc)
    return cached_build(key, cache, lambda tmp: _compile(req, cc, key, tmp))


def _compile(req: BuildRequest, cc: CompilerInfo, key: str,
             tmp: Path) -> tuple[BuildResult, tuple[str, ...] | None]:
    src = tmp / (Path(req.source_name.removesuffix(".j2")).name or "kernel.c")
    run = run_compiler(req, src, compile_command(req, cc, src, tmp / "kernel.so"),
                       "the compiler", COMPILE_TIMEOUT_S)
    if run.returncode != 0:
        return run.result(req, key, "compile_error"), run.inputs
    exported = exported_functions(tmp / "kernel.so", cc.nm)
    if exported is not None and req.kernel_name not in exported:
        missing = _not_found(req.kernel_name, Path(req.source_name.removesuffix(".j2")).name,
                             exported)
        return run.result(req, key, "kernel_not_found", entries=tuple(sorted(exported)),
                          log=f"{missing}\n{run.log}"), run.inputs
    return run.result(req, key, "ok", symbol=req.kernel_name,
                      cubin_path=str(tmp / "kernel.so"),
                      entries=tuple(sorted(exported or ()))), run.inputs


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


def _not_found(name: str, source: str, exported: set[str]) -> KernelNotFound:
    mangled = [e for e in exported if re.match(rf"_Z(?:N\w*?)?{len(name)}{re.escape(name)}", e)]
    hint = (f"it is exported only under its C++ name {mangled[0]}: declare it extern \"C\""
            if mangled else "")
    return KernelNotFound(name, source, sorted(exported)[:8], hint)
