"""One CPU kernel instance, end to end: build, verify and time in the CPU worker, then profile.

What `explain` and `triage` do with a C/C++ source: a kernel that fails verification is never
profiled (its numbers would explain the wrong code), and the profile is saved with the timings
beside it so the folder can be read again later.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pragma_ncu.backends.cpu import build as cpu_build
from pragma_ncu.backends.cpu.collect import (
    Collector,
    UnsupportedInstruction,
    choose_collector,
    collect,
)
from pragma_ncu.backends.cpu.evaluator import CpuEvaluator
from pragma_ncu.backends.results import ProfileRun
from pragma_ncu.build import task as tasks
from pragma_ncu.build.compile import BuildCache, BuildResult
from pragma_ncu.infra.errors import KernelFailure, ToolchainError
from pragma_ncu.infra.progress import Notice
from pragma_ncu.infra.settings import Settings
from pragma_ncu.pool.runner import HostInfo, Runner
from pragma_ncu.profile.profiles import Profile
from pragma_ncu.search.evaluator import RETEST
from pragma_ncu.spec.file import check_shapes
from pragma_ncu.spec.model import ParamValue, Shape, TaskSpec
from pragma_ncu.worker.guards import worker_memory


class CpuRunError(KernelFailure):
    """The kernel could not be built or was wrong (the command's verdict on it)."""


KEY_METRICS = 16  # the first counts of a profile `pragma-ncu profile` shows


def profile_kernel(spec: TaskSpec, shape: Shape, settings: Settings, runner: Runner,
                   out_dir: Path, params: dict[str, ParamValue] | None = None,
                   repeats: int = 1, progress: Notice = lambda _: None) -> ProfileRun:
    """Verify and time `spec`'s kernel at `shape` (`repeats` times), then profile one call
    (a failure raises CpuRunError rather than returning a run without its profile)."""
    host: HostInfo = runner.hello()
    check_shapes(spec, [shape], worker_memory(host.memory_bytes, f"this host ({host.name})"))
    point = {**spec.default_params(), **(params or {})}
    evaluator = CpuEvaluator(spec, settings, runner)
    progress(f"compiling {spec.source_path.name}")
    built = evaluator.build(point)
    if not built.ok or built.cubin_path is None or built.symbol is None:
        raise CpuRunError(built.problem)
    measurements = []
    for i in range(repeats):
        progress(f"verifying and timing at {shape.name} ({i + 1} of {repeats})")
        m = evaluator.measure(point, built, shape, RETEST)
        if not m.status.is_verified:
            raise CpuRunError(f"{spec.kernel_name} fails verification at {shape.name} "
                              f"({m.status.value}): {m.message}")
        measurements.append(m)
    collector = choose_collector(settings.perf, settings.valgrind)
    progress(f"profiling with {collector.name}")
    profile = profile_build(spec, point, shape, built, settings, out_dir, collector)
    profile = replace(profile, collection={
        **profile.collection, "source_file": str(spec.source_path.resolve()),
        "shape": shape.name, "params": point, "host": host.name})
    path = out_dir / "profile.json"
    profile.save(path)
    simulated = bool(profile.collection.get("simulated"))
    return ProfileRun(spec, shape, point, collector.name,
                      f"simulated: {collector.reason}" if simulated else "", built, host,
                      measurements=tuple(measurements), profile=profile, profile_path=path,
                      key_metrics=tuple(("", name) for name in
                                        list(profile.kernels[0].metrics)[:KEY_METRICS]))


def profile_build(spec: TaskSpec, point: dict[str, ParamValue], shape: Shape,
                  built: BuildResult, settings: Settings, out_dir: Path,
                  collector: Collector) -> Profile:
    """Profile one call of a built kernel. Where valgrind cannot simulate the build's
    instructions (-march=native on a CPU newer than valgrind), the same parameters are built
    without the host-specific flags and profiled instead, and the profile says so."""
    assert built.cubin_path is not None and built.symbol is not None
    if settings.cc is None:
        raise ToolchainError("no C compiler for the profiling driver: install gcc or set CC")
    task = spec.resolve(shape, point)
    source = str(spec.source_path.resolve())

    def run(so: str) -> Profile:
        return collect(task, so, built.symbol or "", source, out_dir, cc=settings.cc or "",
                       perf=settings.perf, valgrind=settings.valgrind, collector=collector)

    try:
        return run(built.cubin_path)
    except UnsupportedInstruction as exc:
        portable = _portable(spec, point, settings)
        if portable is None:
            raise
        dropped = [f for f in built.command if "native" in f]
        profile = run(portable)
        note = (f"profiled a build without {' '.join(dropped)}: {exc}")
        return replace(profile, collection={**profile.collection, "portable_build": note})


def _portable(spec: TaskSpec, point: dict[str, ParamValue], settings: Settings) -> str | None:
    """The shared object of `point` built without -march/-mtune/-mcpu=native, or None when
    the build had no such flag (or the portable one does not build)."""
    req = tasks.build_request(spec, cpu_build.HOST_ARCH, point,
                              render_dir=settings.cache_dir / "rendered")
    kept = tuple(f for f in req.flags if "native" not in f)
    if kept == req.flags:
        return None
    cc = cpu_build.find_compiler(settings, cpu_build.is_cxx(spec.source_path.name))
    built = cpu_build.build(replace(req, flags=kept), cc,
                            BuildCache(settings.cache_dir / "build-cpu"))
    return built.cubin_path if built.ok else None
