"""`profile` on the CUDA target: build a kernel, verify and time it, then profile that verified
candidate under ncu.

The profile is taken only of a candidate that passed verification at this shape; its report,
ncu's log and the normalized profile.json are kept together in the output folder.
"""

from __future__ import annotations

import re
from dataclasses import asdict, replace
from pathlib import Path

from pragma_ncu.backends.cuda import build as cuda_build
from pragma_ncu.backends.cuda.collect import CollectRequest, CollectStatus, collect
from pragma_ncu.backends.results import CollectorRun, ProfileRun
from pragma_ncu.build import task as tasks
from pragma_ncu.infra.errors import KernelFailure, NoGPUError, PragmaError, ToolchainError
from pragma_ncu.infra.progress import Notice
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import find_ncu, find_nvcc, target_arch
from pragma_ncu.measure.measurement import Status
from pragma_ncu.pool.ceilings import ceiling_for
from pragma_ncu.pool.runner import DeviceInfo, Runner
from pragma_ncu.profile.read import ReportError, read_report
from pragma_ncu.spec.file import check_shapes
from pragma_ncu.spec.model import ParamValue, Shape, TaskSpec
from pragma_ncu.worker.guards import worker_memory
from pragma_ncu.worker.protocol import EvalRequest, TimingConfig

# What `pragma-ncu profile` shows first of an ncu profile: (label, metric).
KEY_METRICS = (
    ("duration", "gpu__time_duration.sum"),
    ("DRAM throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
    ("L2 throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("L1 throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
    ("SM throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("achieved occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    ("theoretical occupancy", "sm__maximum_warps_per_active_cycle_pct"),
    ("registers/thread", "launch__registers_per_thread"),
    ("shared mem/block", "launch__shared_mem_per_block"),
    ("tensor pipe", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"),
    ("issue slots busy", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
)


def failure_of(run: ProfileRun) -> type[PragmaError] | None:
    """What kind of error stopped a run before its profile (None: it was profiled): the
    kernel's (it does not compile, fails verification, or dies under ncu's replay:
    KernelFailure) or the environment's (no GPU, no ncu, no counter permission, ncu failing
    or timing out, a report it wrote that cannot be read: ToolchainError)."""
    if run.profile is not None:
        return None
    if (run.build is not None and not run.build.ok) or (
            run.measurement is not None and run.measurement.status is not Status.OK):
        return KernelFailure
    if run.collection is not None and run.collection.status == CollectStatus.CRASH:
        return KernelFailure
    return ToolchainError


def _settled(run: ProfileRun) -> ProfileRun:
    return replace(run, failure=failure_of(run))


def default_out_dir(spec: TaskSpec, shape: Shape) -> Path:
    safe = re.sub(r"[^\w.-]+", "_", shape.name)
    return Path("pragma-ncu-profiles") / f"{spec.source_path.stem}-{safe}"


def run_profile(spec: TaskSpec, shape: Shape, settings: Settings, runner: Runner,
                worker: list[str], *, params: dict[str, ParamValue] | None = None,
                arch: str | None = None, request: CollectRequest | None = None,
                out_dir: Path | None = None, progress: Notice = lambda _: None,
                env: dict[str, str] | None = None, repeats: int = 0) -> ProfileRun:
    """Build, verify and time at `shape`, then profile under ncu (`env`: ncu's environment,
    e.g. the pin of the GPU the runner's worker uses), then time the profiled instance
    `repeats` more times (triage's kernel sides take those as their timing sample)."""
    check_shapes(spec, [shape], params=params)  # a launch no GPU runs fails before nvcc
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
    run = ProfileRun(spec, shape, params, "ncu", build=built, device=device,
                     key_metrics=KEY_METRICS)
    if not built.ok:
        return _settled(replace(run, problem=built.problem))
    if device is None:
        return _settled(replace(run, problem=f"no GPU: {why}"))
    assert harness.cubin_path is not None
    ceiling = ceiling_for(runner, harness.cubin_path, settings.cache_dir / "ceilings.json")
    progress(f"verifying and timing at {shape.name} ({shape.label()})")
    req = tasks.eval_request(spec, task, built, harness, timing=TimingConfig())
    measurement = runner.evaluate(req)
    run = replace(run, ceiling=ceiling, measurements=(measurement,))
    if measurement.status is not Status.OK:
        return _settled(replace(
            run, problem=f"not profiled: verification failed ({measurement.status})"))
    runner.close()  # free the GPU memory before ncu's own worker starts
    run = _collect_and_read(run, settings, worker, req, request,
                            out_dir or default_out_dir(spec, shape), progress, env)
    if repeats and run.profile is not None:
        run = _time_again(run, runner, req, repeats, progress)
    return _settled(run)


def _collect_and_read(run: ProfileRun, settings: Settings, worker: list[str],
                      req: EvalRequest, request: CollectRequest, out_dir: Path,
                      progress: Notice, env: dict[str, str] | None = None) -> ProfileRun:
    try:
        ncu = find_ncu(settings)
    except ToolchainError as exc:
        return replace(run, problem=f"timing only: {exc}")
    progress(f"profiling under ncu ({len(request.all_sections())} sections)")
    stem = f"{run.spec.source_path.stem}-{run.shape.name}"
    collection = collect(ncu.path, worker, req, request, out_dir, stem, env)
    run = replace(run, collection=CollectorRun(
        str(collection.status), collection.message, collection.wall_s, collection.report,
        collection.log_path, collection.command))
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
            "resources": (asdict(run.build.resources) if run.build and run.build.resources
                          else None)}
    try:
        profile = read_report(collection.report, settings, collection=info)
    except ReportError as exc:
        return replace(run, problem=str(exc))
    path = out_dir / f"{stem}.profile.json"
    profile.save(path)
    return replace(run, profile=profile, profile_path=path)


def _time_again(run: ProfileRun, runner: Runner, req: EvalRequest, repeats: int,
                progress: Notice) -> ProfileRun:
    """`repeats` more timing runs of the profiled instance, verified like the first (a new
    worker: the first was closed for ncu)."""
    found = []
    for i in range(repeats):
        progress(f"timing run {i + 1} of {repeats}")
        m = runner.evaluate(req)
        if m.status is not Status.OK or m.timing is None:
            raise KernelFailure(f"timing {run.spec.source_path} failed: {m.message}")
        found.append(m)
    return replace(run, measurements=(*run.measurements, *found))
