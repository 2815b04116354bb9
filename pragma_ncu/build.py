"""Compiling kernels with nvcc to cubins, with resource usage from `-Xptxas -v`.

Compiles are cached by content hash (source and its local includes, flags, defines, arch, nvcc
version) and run in parallel across CPU cores; a compile error is a result, not an exception.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class KernelResources:
    registers: int = 0
    shared_static: int = 0  # bytes of static shared memory per block
    stack: int = 0  # bytes of stack frame per thread
    spill_stores: int = 0  # bytes
    spill_loads: int = 0  # bytes
    barriers: int = 0
    const_mem: int = 0


@dataclass(frozen=True)
class BuildRequest:
    source: str  # the .cu text
    source_name: str  # for messages and -I of its folder
    kernel_name: str
    arch: str  # e.g. "sm_90"
    flags: tuple[str, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    include_dirs: tuple[str, ...] = ()
    lineinfo: bool = True


@dataclass(frozen=True)
class BuildResult:
    status: str  # "ok" | "compile_error" | "kernel_not_found"
    kernel_name: str  # the requested name
    symbol: str | None  # the entry point in the cubin (mangled for C++ names)
    cubin_path: str | None
    resources: KernelResources | None
    log: str  # nvcc's output (errors, warnings, ptxas report)
    arch: str
    command: tuple[str, ...]
    key: str
    entries: tuple[str, ...] = ()
    cache_hit: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(data: dict) -> BuildResult:
        res = data.get("resources")
        fields = {**data, "resources": KernelResources(**res) if res else None,
                  "command": tuple(data["command"]), "entries": tuple(data.get("entries", ()))}
        return BuildResult(**fields)


@dataclass
class BuildCache:
    """Compiled cubins under `root/<key>/`; safe to share between processes (atomic renames)."""

    root: Path
    hits: int = field(default=0)

    def entry(self, key: str) -> Path:
        return self.root / key[:2] / key


def local_includes(source: str, folder: Path, seen: set[Path] | None = None) -> list[Path]:
    """Files pulled in with #include "..." from `folder`, recursively (for the cache key)."""
    seen = set() if seen is None else seen
    found = []
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', source, flags=re.M):
        path = (folder / name).resolve()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        found.append(path)
        found += local_includes(path.read_text(errors="replace"), path.parent, seen)
    return found


def content_key(req: BuildRequest, parts: list[Any]) -> str:
    """A build's cache key: `parts` (what the compiler is given and which compiler it is)
    and the content of every local file the source includes."""
    h = hashlib.sha256()
    h.update(json.dumps(parts).encode())
    for path in local_includes(req.source, Path(req.source_name).parent):
        h.update(path.read_bytes())
    return h.hexdigest()


def line_directive(req: BuildRequest) -> str:
    """With line tables (-lineinfo, -g), make them name the user's file, not the temporary
    copy, so that ncu's source view, perf's and cachegrind's lines and `explain`'s hot lines
    can find it."""
    if not req.lineinfo or not req.source_name:
        return ""
    path = str(Path(req.source_name).resolve()).replace("\\", "\\\\").replace('"', '\\"')
    return f'#line 1 "{path}"\n'


def source_arguments(req: BuildRequest, src: Path) -> list[str]:
    """What every compiler is given after its own options: the macros, the include folders
    (the request's, then the source's own folder), the spec's flags and the source."""
    folder = Path(req.source_name).parent
    return [*(f"-D{k}={v}" for k, v in req.defines),
            *(f"-I{d}" for d in (*req.include_dirs, str(folder) if str(folder) else ".")),
            *req.flags, str(src)]


def cached_build(key: str, cache: BuildCache,
                 compile_into: Callable[[Path, Path], BuildResult]) -> BuildResult:
    """The cached result under `key`, or `compile_into(tmp, entry)` run in a fresh folder that
    then becomes the entry (atomically: a concurrent compile of the same key keeps its own)."""
    entry = cache.entry(key)
    meta = entry / "build.json"
    if meta.is_file():
        cache.hits += 1
        return replace(BuildResult.from_json(json.loads(meta.read_text())), cache_hit=True,
                       seconds=0.0)
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key[:8]}-", dir=entry.parent))
    try:
        result = compile_into(tmp, entry)
        (tmp / "build.json").write_text(json.dumps(result.to_json(), indent=1))
        try:
            os.rename(tmp, entry)
        except OSError:  # another process finished the same compile first: use theirs
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if tmp.exists() and not entry.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return result


@dataclass(frozen=True)
class Compiled:
    """One compiler run: its messages (the temporary file named as the user's), its exit
    status (-1 when it ran out of time), how long it took and what ran."""

    log: str
    returncode: int
    seconds: float
    command: tuple[str, ...]

    def result(self, req: BuildRequest, key: str, status: str, **fields: Any) -> BuildResult:
        """The BuildResult of this run (`fields`: symbol, cubin_path, resources, entries; a
        failure's are None)."""
        values: dict[str, Any] = dict(symbol=None, cubin_path=None, resources=None,
                                      log=self.log)
        return BuildResult(status=status, kernel_name=req.kernel_name, arch=req.arch,
                           command=self.command, key=key, seconds=self.seconds,
                           **{**values, **fields})


def run_compiler(req: BuildRequest, src: Path, command: list[str], tool: str,
                 timeout_s: float) -> Compiled:
    """Write `req`'s source to `src` (behind its #line directive) and run `command` on it:
    the one compile step of every backend's build."""
    src.write_text(line_directive(req) + req.source)
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
        log, rc = (proc.stdout + proc.stderr).replace(str(src), req.source_name), proc.returncode
    except subprocess.TimeoutExpired:
        log, rc = f"{tool} did not finish within {timeout_s:g} s", -1
    return Compiled(log, rc, time.perf_counter() - start, tuple(command))


def failed_build(kernel_name: str, arch: str, message: str) -> BuildResult:
    """A build that never reached the compiler (the template did not render)."""
    return BuildResult(status="compile_error", kernel_name=kernel_name, symbol=None,
                       cubin_path=None, resources=None, log=message, arch=arch, command=(),
                       key="")
