"""`profile` on the CUDA target: build a kernel, verify and time it, then profile that verified
candidate under ncu.

The profile is taken only of a candidate that passed verification at this shape; its report,
ncu's log and the normalized profile.json are kept together in the output folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from pragma_ncu import task as tasks
from pragma_ncu.backends.cuda import build as cuda_build
from pragma_ncu.backends.cuda.collect import Collection, CollectRequest, CollectStatus, collect
from pragma_ncu.build import BuildResult
from pragma_ncu.ceilings import Ceiling, ceiling_for
from pragma_ncu.errors import KernelFailure, NoGPUError, PragmaError, ToolchainError
from pragma_ncu.measurement import Measurement, Status
from pragma_ncu.profile.profiles import Profile
from pragma_ncu.profile.read import ReportError, read_report
from pragma_ncu.runner import DeviceInfo, Runner
from pragma_ncu.settings import Settings
from pragma_ncu.spec import ParamValue, Shape, TaskSpec
from pragma_ncu.specfile import check_shapes
from pragma_ncu.stats import TimingStats
from pragma_ncu.toolchain import find_ncu, find_nvcc, target_arch
from pragma_ncu.worker.guards import worker_memory
from pragma_ncu.worker.protocol import EvalRequest, TimingConfig

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ProfileRun:
    """Everything one `profile` produced; `profile` is None when a step before it failed, and
    `problem` says which and why."""

    spec: TaskSpec
    shape: Shape
    params: dict[str, ParamValue]
    build: BuildResult
    device: DeviceInfo | None
    ceiling: Ceiling | None
    measurement: Measurement | None
    collection: Collection | None
    profile: Profile | None
    profile_path: Path | None
    problem: str = ""
    repeats: tuple[Measurement, ...] = ()  # timing runs after the profiled one, when asked
    request: EvalRequest | None = None  # what verified and timed it

    @property
    def timings(self) -> tuple[TimingStats, ...]:
        """Every timing of the profiled instance: the verified run's, then the repeats'."""
        runs = (self.measurement, *self.repeats) if self.measurement else self.repeats
        return tuple(m.timing for m in runs if m.timing is not None)

    @property
    def device_name(self) -> str | None:
        return self.device.name if self.device else None

    def note(self) -> str:
        """What was done, for a triage side measured now."""
        return f"profiled and timed now at {self.shape.name}"

    def failure_kind(self) -> type[PragmaError] | None:
        """What kind of error stopped the run before its profile (None: it was profiled): the
        kernel's (it does not compile, fails verification, or dies under ncu's replay:
        KernelFailure) or the environment's (no GPU, no ncu, no counter permission, ncu
        failing or timing out, a report it wrote that cannot be read: ToolchainError)."""
        if self.profile is not None:
            return None
        if not self.build.ok or (self.measurement is not None
                                 and self.measurement.status is not Status.OK):
            return KernelFailure
        if self.collection is not None and self.collection.status is CollectStatus.CRASH:
            return KernelFailure
        return ToolchainError


def default_out_dir(spec: TaskSpec, shape: Shape) -> Path:
    safe = re.sub(r"[^\w.-]+", "_", shape.name)
    return Path("pragma-ncu-profiles") / f"{spec.source_path.stem}-{safe}"


def run_profile(spec: TaskSpec, shape: Shape, settings: Settings, runner: Runner,
                worker: list[str], *, params: dict[str, ParamValue] | None = None,
                arch: str | None = None, request: CollectRequest | None = None,
                out_dir: Path | None = None, progress: Progress = lambda _: None,
                env: dict[str, str] | None = None) -> ProfileRun:
    """Build, verify and time at `shape`, then profile under ncu (`env`: ncu's environment,
    e.g. the pin of the GPU the runner's worker uses)."""
    params = {**spec.default_params(), **(params or {})}
    request = request or CollectRequest()
    task = spec.resolve(shape, params)
    nvcc = find_nvcc(settings)
    progress("starting the GPU worker")
    try:
        device: DeviceInfo | None = runner.hello()
    except NoGPUError as exc:
        device, why = None, exc.reason
    if device is not None:
        check_shapes(spec, [shape], worker_memory(device.memory_bytes, device.name))
    target = target_arch(arch, device.arch if device else None)
    progress(f"compiling {spec.source_path.name} for {target}")
    built, harness = cuda_build.build_with_harness(spec, target, nvcc, settings, params)
    run = ProfileRun(spec, shape, params, built, device, None, None, None, None, None)
    if not built.ok:
        return replace(run, problem=built.problem)
    if device is None:
        return replace(run, problem=f"no GPU: {why}")
    assert harness.cubin_path is not None
    ceiling = ceiling_for(runner, harness.cubin_path, settings.cache_dir / "ceilings.json")
    progress(f"verifying and timing at {shape.name} ({shape.label()})")
    req = tasks.eval_request(spec, task, built, harness, timing=TimingConfig())
    measurement = runner.evaluate(req)
    run = replace(run, ceiling=ceiling, measurement=measurement, request=req)
    if measurement.status is not Status.OK:
        return replace(run, problem=f"not profiled: verification failed ({measurement.status})")
    runner.close()  # free the GPU memory before ncu's own worker starts
    return _collect_and_read(run, settings, worker, req, request,
                             out_dir or default_out_dir(spec, shape), progress, env)


def _collect_and_read(run: ProfileRun, settings: Settings, worker: list[str],
                      req: EvalRequest, request: CollectRequest, out_dir: Path,
                      progress: Progress, env: dict[str, str] | None = None) -> ProfileRun:
    try:
        ncu = find_ncu(settings)
    except ToolchainError as exc:
        return replace(run, problem=f"timing only: {exc}")
    progress(f"profiling under ncu ({len(request.all_sections())} sections)")
    stem = f"{run.spec.source_path.stem}-{run.shape.name}"
    collection = collect(ncu.path, worker, req, request, out_dir, stem, env)
    run = replace(run, collection=collection)
    if not collection.ok or collection.report is None:
        return replace(run, problem=collection.message)
    progress("reading the report")
    info = {"shape": run.shape.name, "dims": dict(run.shape.dims), "params": run.params,
            "sections": list(request.all_sections()), "metrics": list(request.metrics),
            "ncu_wall_s": round(collection.wall_s, 2), "source_file": str(
                run.spec.source_path.resolve()),
            "ceiling_gbps": run.ceiling.gbps if run.ceiling else None,
            "median_us": (run.measurement.timing.median_us
                          if run.measurement and run.measurement.timing else None),
            "device": run.device.name if run.device else None,
            # ptxas's report: spill and stack bytes tell spills from stack arrays
            "resources": asdict(run.build.resources) if run.build.resources else None}
    try:
        profile = read_report(collection.report, settings, collection=info)
    except ReportError as exc:
        return replace(run, problem=str(exc))
    path = out_dir / f"{stem}.profile.json"
    profile.save(path)
    return replace(run, profile=profile, profile_path=path)


def time_again(run: ProfileRun, settings: Settings, runner: Runner, repeats: int,
               progress: Progress = lambda _: None) -> ProfileRun:
    """`repeats` more timing runs of the profiled instance, verified like the first (what
    triage's kernel sides take as their timing sample)."""
    assert run.request is not None
    found = []
    for i in range(repeats):
        progress(f"timing run {i + 1} of {repeats}")
        m = runner.evaluate(run.request)
        if m.status is not Status.OK or m.timing is None:
            raise KernelFailure(f"timing {run.spec.source_path} failed: {m.message}")
        found.append(m)
    return replace(run, repeats=tuple(found))
