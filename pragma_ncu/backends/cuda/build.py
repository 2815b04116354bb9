"""The CUDA target's build: nvcc compiles a kernel to a cubin (cached, in parallel on all
cores), `-Xptxas -v` reports its resources, and the worker's own helpers are built beside it:
the harness (copies, L2 flush, checks: worker/harness.cu) and the compute-ceiling
microbenchmarks (worker/peaks.cu)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

from pragma_ncu.build import task as tasks
from pragma_ncu.build.compile import (
    BuildCache,
    BuildRequest,
    BuildResult,
    KernelResources,
    cached_build,
    line_directive,
    request_key,
    run_compiler,
    source_arguments,
)
from pragma_ncu.infra.errors import KernelNotFound
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import NvccInfo
from pragma_ncu.spec.model import ParamValue, TaskSpec

COMPILE_TIMEOUT_S = 600
HARNESS_ENTRY = "copy_vec16"


def parse_ptxas(log: str) -> dict[str, KernelResources]:
    """Per-entry resources from a `-Xptxas -v` report."""
    out: dict[str, KernelResources] = {}
    current: str | None = None
    values: dict[str, int] = {}
    for line in log.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?([\w$.]+)'?", line)
        if m:
            if current and current != m.group(1):
                out[current] = KernelResources(**values)
                values = {}
            current = m.group(1)
            continue
        if current is None:
            continue
        for pattern, key in (
            (r"(\d+) bytes stack frame", "stack"), (r"(\d+) bytes spill stores", "spill_stores"),
            (r"(\d+) bytes spill loads", "spill_loads"), (r"Used (\d+) registers", "registers"),
            (r"used (\d+) barriers", "barriers"), (r"(\d+) bytes smem", "shared_static"),
            (r"(\d+) bytes cmem\[0\]", "const_mem"),
        ):
            found = re.search(pattern, line)
            if found:
                values[key] = int(found.group(1))
    if current:
        out[current] = KernelResources(**values)
    return out


def find_symbol(name: str, entries: Sequence[str]) -> str | None:
    """The entry for `name`: itself (extern "C"), or a mangled C++ name of that function."""
    if name in entries:
        return name
    mangled = [e for e in entries if re.match(rf"_Z(?:N\w*?)?{len(name)}{re.escape(name)}", e)]
    return mangled[0] if mangled else None


def plain_name(entry: str) -> str:
    """A cubin's entry as the source names it: _Z6kernelPfi and _Z9templatedILi4EEvPf are
    kernel and templated; an extern "C" name (or a nested one) is itself."""
    m = re.match(r"_Z(\d+)", entry)
    return entry[m.end():m.end() + int(m.group(1))] if m else entry


def cache_key(req: BuildRequest, nvcc: NvccInfo) -> str:
    """The request's key (the headers it reads are added by the cache: `BuildCache`)."""
    return request_key([req.source, req.kernel_name, req.arch, list(req.flags),
                        list(req.defines), list(req.include_dirs), req.lineinfo, nvcc.path,
                        nvcc.banner, list(nvcc.environment),
                        line_directive(req)])  # the cubin's line table names the file


def nvcc_command(req: BuildRequest, nvcc: NvccInfo, src: Path, out: Path) -> list[str]:
    cmd = [nvcc.path, f"-arch={req.arch}", "-cubin", "-Xptxas", "-v", "-o", str(out)]
    if req.lineinfo:
        cmd.append("-lineinfo")
    return cmd + source_arguments(req, src)


def build(req: BuildRequest, nvcc: NvccInfo, cache: BuildCache) -> BuildResult:
    """Compile one kernel (or return the cached result of the same compile)."""
    key = cache_key(req, nvcc)
    return cached_build(key, cache, lambda tmp: _compile(req, nvcc, key, tmp))


def _compile(req: BuildRequest, nvcc: NvccInfo, key: str,
             tmp: Path) -> tuple[BuildResult, tuple[str, ...] | None]:
    src = tmp / "kernel.cu"
    run = run_compiler(req, src, nvcc_command(req, nvcc, src, tmp / "kernel.cubin"), "nvcc",
                       COMPILE_TIMEOUT_S)
    if run.returncode != 0:
        return run.result(req, key, "compile_error"), run.inputs
    per_entry = parse_ptxas(run.log)
    symbol = find_symbol(req.kernel_name, list(per_entry))
    if symbol is None:
        missing = KernelNotFound(req.kernel_name, Path(req.source_name).name,
                                 sorted({plain_name(e) for e in per_entry}))
        return run.result(req, key, "kernel_not_found", entries=tuple(per_entry),
                          log=f"{missing}\n{run.log}"), run.inputs
    return run.result(req, key, "ok", symbol=symbol, cubin_path=str(tmp / "kernel.cubin"),
                      resources=per_entry[symbol], entries=tuple(per_entry)), run.inputs


def build_many(reqs: Sequence[BuildRequest], nvcc: NvccInfo, cache: BuildCache,
               jobs: int) -> list[BuildResult]:
    """Compile in parallel on `jobs` threads (each runs an nvcc process); results in order."""
    if len(reqs) <= 1 or jobs <= 1:
        return [build(r, nvcc, cache) for r in reqs]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda r: build(r, nvcc, cache), reqs))


def harness_request(arch: str) -> BuildRequest:
    text = resources.files("pragma_ncu.backends.cuda.worker").joinpath("harness.cu").read_text()
    return BuildRequest(source=text, source_name="harness.cu", kernel_name=HARNESS_ENTRY,
                        arch=arch, lineinfo=False)


def build_with_harness(spec: TaskSpec, arch: str, nvcc: NvccInfo, settings: Settings,
                       params: dict[str, ParamValue] | None = None) -> tuple[BuildResult,
                                                                            BuildResult]:
    """Compile the kernel and the harness for `arch`, in parallel; (kernel, harness)."""
    cache = BuildCache(settings.cache_dir / "build")
    kernel, harness = build_many([tasks.build_request(spec, arch, params,
                                                render_dir=settings.cache_dir / "rendered"),
                                  harness_request(arch)], nvcc, cache, settings.jobs)
    return kernel, _checked_harness(harness, arch)


def peaks_request(arch: str) -> BuildRequest:
    text = resources.files("pragma_ncu.backends.cuda.worker").joinpath("peaks.cu").read_text()
    return BuildRequest(source=text, source_name="peaks.cu", kernel_name="peak_ffma", arch=arch,
                        lineinfo=False)


def build_peaks(arch: str, nvcc: NvccInfo, settings: Settings) -> BuildResult:
    """The compute-ceiling microbenchmarks (worker/peaks.cu) for `arch`."""
    return _checked_harness(build(peaks_request(arch), nvcc,
                                  BuildCache(settings.cache_dir / "build")), arch)


def build_harness(arch: str, nvcc: NvccInfo, settings: Settings) -> BuildResult:
    """The harness alone (copies, L2 flush, checks), for callers that build kernels themselves."""
    return _checked_harness(build(harness_request(arch), nvcc,
                                  BuildCache(settings.cache_dir / "build")), arch)


def _checked_harness(harness: BuildResult, arch: str) -> BuildResult:
    if not harness.ok:
        raise RuntimeError(f"the bundled harness failed to compile for {arch}:\n{harness.log}")
    return harness
