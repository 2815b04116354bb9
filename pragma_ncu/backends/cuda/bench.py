"""`bench` on the CUDA target: build a kernel, then verify and time it at each requested shape."""

from __future__ import annotations

import queue
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from pragma_ncu.backends.cuda import build as cuda_build
from pragma_ncu.backends.cuda.ceilings import measured_compute
from pragma_ncu.backends.results import BenchReport, BenchRow
from pragma_ncu.build import task as tasks
from pragma_ncu.infra.errors import NoGPUError
from pragma_ncu.infra.progress import Notice
from pragma_ncu.infra.settings import Settings
from pragma_ncu.infra.toolchain import find_nvcc, target_arch
from pragma_ncu.pool.ceilings import ceiling_for
from pragma_ncu.pool.runner import DeviceInfo, Runner
from pragma_ncu.pool.workers import Lane, WorkerPool
from pragma_ncu.spec.file import check_shapes
from pragma_ncu.spec.model import ParamValue, ResolvedTask, Shape, TaskSpec
from pragma_ncu.worker.guards import worker_memory
from pragma_ncu.worker.protocol import EvalRequest, TimingConfig


def run_bench(spec: TaskSpec, shapes: Sequence[Shape], settings: Settings, runner: Runner, *,
              params: dict[str, ParamValue] | None = None, arch: str | None = None,
              timing: TimingConfig | None = None, progress: Notice = lambda _: None,
              pool: WorkerPool | None = None) -> BenchReport:
    """Build once, then measure every shape in `runner`'s worker, or with a `pool` (whose
    primary is the runner) the shapes spread over its workers."""
    check_shapes(spec, shapes, params=params)  # bad shapes and launches fail early
    params = {**spec.default_params(), **(params or {})}
    tasks_by_shape = [(s, spec.resolve(s, params)) for s in shapes]
    nvcc = find_nvcc(settings)
    device, reason = _open_device(runner, progress)
    if device is not None:
        check_shapes(spec, shapes, worker_memory(device.memory_bytes, device.name))
    target = target_arch(arch, device.arch if device else None)
    progress(f"compiling {spec.source_path.name} for {target}")
    built, harness = cuda_build.build_with_harness(spec, target, nvcc, settings, params)
    if device is None or not built.ok:
        return BenchReport(spec, params, built, device, reason, None, ())
    assert harness.cubin_path is not None
    progress("copy-bandwidth ceiling")
    ceiling = ceiling_for(runner, harness.cubin_path, settings.cache_dir / "ceilings.json")
    compute = None
    if any(task.flops for _, task in tasks_by_shape):
        progress("compute ceilings")
        compute = measured_compute(runner, target, nvcc, settings)
    requests = [(shape, task, tasks.eval_request(spec, task, built, harness,
                                                 timing=timing or TimingConfig()))
                for shape, task in tasks_by_shape]
    if pool is not None and len(pool.live) > 1 and len(requests) > 1:
        rows = _spread(requests, pool, progress)
    else:
        rows = []
        for shape, task, req in requests:
            progress(f"shape {shape.name} ({shape.label()})")
            rows.append(BenchRow(shape, task, runner.evaluate(req)))
    return BenchReport(spec, params, built, device, None, ceiling, tuple(rows), compute)


def _spread(requests: list[tuple[Shape, ResolvedTask, EvalRequest]], pool: WorkerPool,
            progress: Notice) -> list[BenchRow]:
    """Each worker measures the next shape waiting; rows in the shapes' order. A crash or a
    hang is the row's status, as on one GPU."""
    waiting: queue.SimpleQueue[int] = queue.SimpleQueue()
    for i in range(len(requests)):
        waiting.put(i)
    rows: dict[int, BenchRow] = {}

    def serve(lane: Lane) -> None:
        while True:
            try:
                i = waiting.get_nowait()
            except queue.Empty:
                return
            shape, task, req = requests[i]
            progress(f"shape {shape.name} ({shape.label()}) on {lane.label}")
            rows[i] = BenchRow(shape, task, lane.runner.evaluate(req), lane.label)

    with ThreadPoolExecutor(max_workers=len(pool.live)) as threads:
        list(threads.map(serve, pool.live))
    return [rows[i] for i in range(len(requests))]


def _open_device(runner: Runner, progress: Notice) -> tuple[DeviceInfo | None, str | None]:
    progress("starting the GPU worker")
    try:
        return runner.hello(), None
    except NoGPUError as exc:
        return None, exc.reason
