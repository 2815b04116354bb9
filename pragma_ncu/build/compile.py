"""Compiling kernels: the nouns every target's build shares, the one compile step, and the
compile cache.

A build is cached under the hash of everything that shapes it: the source, the flags, macros
and arch, the compiler's identity and environment, and every file its preprocessor read (from
the compiler's own dependency output; see `BuildCache`). A compile error is a result, not an
exception.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pragma_ncu.infra import sources

_log = logging.getLogger(__name__)  # ("log" is a compiler's output here)
CACHE_FORMAT = "inputs-1"  # in every request key: entries of an older scheme are never read
MANIFEST_ENTRIES = 8  # versions of a request's headers remembered (the newest)
# A file's mtime comes from the kernel's coarse clock, up to a tick (10 ms at HZ=100) behind
# time.time_ns(): a file written that long before a compile starts counts as written during it.
CLOCK_TICK_NS = 20_000_000


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
    """A compile's result. For "kernel_not_found" the log's first line is the target's
    KernelNotFound message (the words the early check of the source uses)."""

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
    source_name: str = ""  # the file compiled, as the user knows it

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def problem(self) -> str:
        """Why the build cannot be used, for the user ("" when it can): that the kernel is
        not in the file, or the first lines of the compiler's own error."""
        if self.ok:
            return ""
        if self.status == "kernel_not_found":
            return self.log.strip().splitlines()[0] if self.log.strip() else (
                f"no kernel named {self.kernel_name} in the build")
        name = Path(self.source_name).name or self.kernel_name
        return f"{name} does not compile:\n{compiler_excerpt(self.log)}"

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
    """Compiled cubins under `root/<key>/`; safe to share between processes (atomic renames).

    A build is found in two steps, as ccache's direct mode does: the request's key (what the
    compiler is given and which compiler it is, `request_key`) names a manifest under
    `root/manifests/`, which lists the files each earlier compile of that request read (from
    the compiler's own dependency output) with their hashes; the first whose files all hash the
    same now names the build's folder. So an edited header, found next to the source, through
    a `-I` flag or a template's include folder, is a new build, without a preprocessor run per
    lookup (benchmarks/build_cache_lookup.py measures both ways)."""

    root: Path
    hits: int = field(default=0)

    def entry(self, key: str) -> Path:
        return self.root / key[:2] / key

    def manifest(self, key: str) -> Path:
        return self.root / "manifests" / key[:2] / f"{key}.json"


def compiler_excerpt(log: str, limit: int = 12) -> str:
    """The first lines of a compiler's error: from its first line that says error (or the
    line before, when that one says where: gcc's "In function 'k':"), at most `limit` lines,
    and how many more there were."""
    lines = [line.rstrip() for line in log.splitlines() if line.strip()]
    if not lines:
        return "(the compiler said nothing)"
    first = next((i for i, line in enumerate(lines)
                  if re.search(r"\berror\b|\bfatal\b|did not finish", line, re.I)), 0)
    if first > 0 and lines[first - 1].endswith(":"):
        first -= 1
    shown = lines[first:first + limit]
    more = len(lines) - first - len(shown)
    return "\n".join([*shown, *([f"... ({more} more lines)"] if more > 0 else [])])


def request_key(parts: list[Any]) -> str:
    """The key of a compile request: `parts` (the source, flags, macros, arch, the compiler's
    identity and environment) and the folder the compiler runs in (relative `-I` paths are
    found from there, and `-g` records it: ccache's hash_dir), in this cache's format."""
    return hashlib.sha256(json.dumps([CACHE_FORMAT, os.getcwd(), *parts]).encode()).hexdigest()


def read_depfile(path: Path, own: Path) -> tuple[str, ...] | None:
    """The files a compile read, from the compiler's dependency output (`-MD -MF path`, make
    syntax: `target: file file \\`), as absolute paths, those under `own` (the compile's own
    folder: the source copy) left out; None when the compiler wrote none (a missing header
    stops it before it does)."""
    try:
        text = path.read_text(errors="surrogateescape")
    except OSError:
        return None
    rule = re.split(r"(?<!\\):(?:[ \t]|$)", text.replace("\\\n", " "), maxsplit=1)
    if len(rule) != 2:
        return None
    names = (re.sub(r"\\([ #])", r"\1", n).replace("$$", "$")
             for n in re.findall(r"(?:\\.|[^\s\\])+", rule[1]))
    found = (os.path.abspath(n) for n in names)
    return tuple(dict.fromkeys(n for n in found if not Path(n).is_relative_to(own)))


_DIGESTS: dict[str, tuple[tuple[int, ...], str]] = {}  # path -> (its stat, its hash)
_DIGESTS_LOCK = threading.Lock()


def file_digest(path: str) -> str:
    """The SHA-256 of a file's bytes ("-" when it is missing), hashed again only when its
    stat (size, times, inode) changed since this process last hashed it: a search looks the
    same headers up hundreds of times."""
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "-"
    with _DIGESTS_LOCK:
        _DIGESTS[path] = (stamp, digest)
    return digest


def _inputs_now(inputs: tuple[str, ...] | None, started_ns: int) -> dict[str, str] | None:
    """Each file's hash, or None when the build cannot be cached: no dependency output, or a
    file changed while the compiler ran (its hash now may not be what the compiler read)."""
    if inputs is None:
        return None
    for name in inputs:
        with contextlib.suppress(OSError):
            if os.stat(name).st_mtime_ns >= started_ns:
                return None
    return {name: file_digest(name) for name in inputs}


def _lookup(key: str, cache: BuildCache) -> BuildResult | None:
    """The build of an earlier compile of `key` whose inputs all hash the same now."""
    for item in reversed(_manifest(cache.manifest(key))):
        inputs, entry = item.get("inputs"), item.get("entry")
        if not isinstance(inputs, dict) or not isinstance(entry, str):
            continue
        if all(file_digest(name) == digest for name, digest in inputs.items()):
            meta = cache.entry(entry) / "build.json"
            with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
                found = BuildResult.from_json(json.loads(meta.read_text()))
                return replace(found, cache_hit=True, seconds=0.0)
    return None


def _manifest(path: Path) -> list[dict[str, Any]]:
    try:
        items = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _remember(cache: BuildCache, key: str, inputs: dict[str, str], entry: str) -> None:
    """Add (inputs, entry) to `key`'s manifest (atomically; a concurrent writer's entry may be
    lost, which costs one compile later, never a wrong build)."""
    path = cache.manifest(key)
    items = [i for i in _manifest(path) if i.get("entry") != entry]
    items = [*items, {"inputs": inputs, "entry": entry}][-MANIFEST_ENTRIES:]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(items))
    tmp.replace(path)


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


Compile = Callable[[Path], tuple[BuildResult, tuple[str, ...] | None]]


def cached_build(key: str, cache: BuildCache, compile_into: Compile) -> BuildResult:
    """The build of an earlier compile of `key` whose inputs are unchanged, or
    `compile_into(tmp)` (a result and the files the compiler read) run in a fresh folder that
    then becomes the entry named by the key and those files' hashes (atomically: a concurrent
    compile of the same build keeps its own)."""
    found = _lookup(key, cache)
    if found is not None:
        cache.hits += 1
        _log.debug("compile cache hit %s (%s)", key[:16], found.status)
        return found
    cache.root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key[:8]}-", dir=cache.root))
    try:
        started = time.time_ns() - CLOCK_TICK_NS
        result, inputs = compile_into(tmp)
        hashes = _inputs_now(inputs, started)
        if hashes is None and result.cubin_path is None:
            return result  # nothing to keep: a failure that is not cached
        name = (hashlib.sha256(json.dumps([key, sorted(hashes.items())]).encode()).hexdigest()
                if hashes is not None else f"{key}-{uuid.uuid4().hex[:12]}")
        entry = cache.entry(name)
        if result.cubin_path is not None:
            result = replace(result, cubin_path=str(entry / Path(result.cubin_path).name))
        (tmp / "build.json").write_text(json.dumps(result.to_json(), indent=1))
        entry.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(tmp, entry)
        except OSError:  # another process finished the same compile first: use theirs
            shutil.rmtree(tmp, ignore_errors=True)
        if hashes is not None:
            _remember(cache, key, hashes, name)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return result


@dataclass(frozen=True)
class Compiled:
    """One compiler run: its messages (the temporary file named as the user's), its exit
    status (-1 when it ran out of time), how long it took, what ran, and the files its
    preprocessor read besides the source (None when it did not say: see `read_depfile`)."""

    log: str
    returncode: int
    seconds: float
    command: tuple[str, ...]
    inputs: tuple[str, ...] | None = None

    def result(self, req: BuildRequest, key: str, status: str, **fields: Any) -> BuildResult:
        """The BuildResult of this run (`fields`: symbol, cubin_path, resources, entries; a
        failure's are None)."""
        values: dict[str, Any] = dict(symbol=None, cubin_path=None, resources=None,
                                      log=self.log)
        return BuildResult(status=status, kernel_name=req.kernel_name, arch=req.arch,
                           command=self.command, key=key, seconds=self.seconds,
                           source_name=req.source_name, **{**values, **fields})


def run_compiler(req: BuildRequest, src: Path, command: list[str], tool: str,
                 timeout_s: float) -> Compiled:
    """Write `req`'s source to `src` (behind its #line directive, its bytes as read) and run
    `command` on it, asking for the dependency output (`-MD -MF`, which nvcc, gcc and clang
    all take): the one compile step of every backend's build."""
    src.write_bytes(sources.encode(line_directive(req) + req.source))
    depfile = src.with_name("deps.d")
    command = [*command, "-MD", "-MF", str(depfile)]
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              timeout=timeout_s)
        log, rc = (proc.stdout + proc.stderr).replace(str(src), req.source_name), proc.returncode
    except subprocess.TimeoutExpired:
        log, rc = f"{tool} did not finish within {timeout_s:g} s", -1
    seconds = time.perf_counter() - start
    _log.debug("%s %s in %.2f s (exit %d): %s", tool, "compiled" if rc == 0 else "failed",
               seconds, rc, shlex.join(command))
    own = {str(Path(req.source_name).resolve())} if line_directive(req) else set()
    inputs = read_depfile(depfile, src.parent)
    return Compiled(log, rc, seconds, tuple(command),
                    None if inputs is None else tuple(n for n in inputs if n not in own))


def failed_build(kernel_name: str, arch: str, message: str,
                 source_name: str = "") -> BuildResult:
    """A build that never reached the compiler (the template did not render)."""
    return BuildResult(status="compile_error", kernel_name=kernel_name, symbol=None,
                       cubin_path=None, resources=None, log=message, arch=arch, command=(),
                       key="", source_name=source_name)
