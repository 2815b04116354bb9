"""One `evaluate` request: verify, time, re-verify a candidate at one shape."""

from __future__ import annotations

import time
from contextlib import suppress
from dataclasses import replace
from typing import Any

from pragma_ncu.measurement import CheckRound, Measurement, Status, classify_check
from pragma_ncu.worker import checks, timing
from pragma_ncu.worker.device_reference import device_reference
from pragma_ncu.worker.gpu import CudaFailure, Gpu
from pragma_ncu.worker.protocol import EvalRequest, ReferenceSpec
from pragma_ncu.worker.reference import FUNCTION_KINDS, load_reference
from pragma_ncu.worker.workspace import Workspace


class Session:
    """State a worker keeps across requests: the GPU, reference outputs, the L2 flusher."""

    def __init__(self, gpu: Gpu) -> None:
        self.gpu = gpu
        self.refs = checks.ReferenceCache(gpu, gpu.memory_free() // 4)
        self.flushers: dict[str, timing.Flusher] = {}

    def flusher(self, harness: str) -> timing.Flusher:
        if harness not in self.flushers:
            self.flushers[harness] = timing.Flusher(self.gpu, harness)
        return self.flushers[harness]


def evaluate(session: Session, req: EvalRequest) -> Measurement:
    """Measure one candidate; expected failures come back as a status, CUDA failures raise."""
    start = time.perf_counter()
    gpu, task, cand = session.gpu, req.task, req.candidate
    base = Measurement(status=Status.OK, shape=task.shape_name, bytes_moved=task.bytes_moved,
                       flops=task.flops)
    try:
        kernel = gpu.kernel(cand.cubin, cand.symbol)
    except Exception as exc:
        return replace(base, status=Status.LAUNCH_ERROR, message=f"cannot load kernel: {exc}")
    threads = cand.launch.threads_per_block
    try:
        gpu.allow_dynamic_shared(kernel, cand.launch.shared_mem)
        blocks = int(kernel.occupancy.max_active_blocks_per_multiprocessor(
            threads, cand.launch.shared_mem))
        base = replace(base, active_blocks_per_sm=blocks,
                       occupancy=blocks * threads / gpu.max_threads_per_sm)
    except Exception as exc:  # an occupancy query can fail for a launch the device refuses
        return replace(base, status=Status.LAUNCH_ERROR, message=str(exc))
    ws = None
    try:
        ws = Workspace(gpu, req.harness, task.args)
        return _measure(session, req, ws, kernel, base, start)
    except CudaFailure as exc:
        status = Status.RUNTIME_ERROR if exc.fatal else Status.LAUNCH_ERROR
        return replace(base, status=status, message=str(exc), extra={"fatal": exc.fatal},
                       seconds=time.perf_counter() - start)
    finally:
        if ws is not None:
            with suppress(CudaFailure):  # after a sticky error, frees fail too
                ws.close()


def _measure(session: Session, req: EvalRequest, ws: Workspace, kernel: Any, base: Measurement,
             start: float) -> Measurement:
    gpu, cand = session.gpu, req.candidate

    def launch(overrides: dict[str, int] | None = None, target: Any = None) -> None:
        gpu.launch(kernel, cand.launch.grid, cand.launch.block, cand.launch.shared_mem,
                   *ws.kernel_args(overrides), target=target)

    rounds: list[CheckRound] = []
    ref_seconds = 0.0
    result = base
    for index, seed in enumerate(req.check.seeds):
        phase = "verify" if index == 0 else "reverify"
        if index == 1 and req.timing is not None:
            result = _timed(session, req, ws, launch, result)
        check, spent = _check_round(session, req, ws, launch, phase, seed)
        ref_seconds += spent
        rounds.append(check)
        if check.status is not Status.OK:
            return replace(result, status=check.status, message=f"{phase}: {check.message}",
                           checks=tuple(rounds), timing=None, reference_seconds=ref_seconds,
                           seconds=time.perf_counter() - start)
    if len(req.check.seeds) < 2 and req.timing is not None:
        result = _timed(session, req, ws, launch, result)
    return replace(result, checks=tuple(rounds), reference_seconds=ref_seconds,
                   seconds=time.perf_counter() - start)


def _timed(session: Session, req: EvalRequest, ws: Workspace, launch: Any,
           result: Measurement) -> Measurement:
    assert req.timing is not None
    flusher = session.flusher(req.harness)
    ws.prepare(req.check.seeds[0])
    stats = timing.time_launch(session.gpu, ws, launch, flusher, req.timing)
    # A copy is timed one launch at a time, so it is only comparable with the same mode.
    copy_us = (timing.time_copy(session.gpu, flusher, req.task.bytes_moved)
               if req.timing.copy_reference and stats.mode == "events" else None)
    return replace(result, timing=stats, copy_us=copy_us)


def _check_round(session: Session, req: EvalRequest, ws: Workspace, launch: Any, phase: str,
                 seed: int) -> tuple[CheckRound, float]:
    ws.prepare(seed)
    t0 = time.perf_counter()
    try:
        refs = _reference(session, req, ws, seed)
    except (checks.ReferenceFailure, CudaFailure) as exc:
        if isinstance(exc, CudaFailure) and exc.fatal:
            raise
        return CheckRound(phase, seed, Status.REFERENCE_ERROR, message=str(exc)), 0.0
    spent = time.perf_counter() - t0
    launch()
    session.gpu.sync()
    tolerances = {name: (atol, rtol) for name, atol, rtol in req.check.tolerances}
    outputs, guards, mutated = checks.run_checks(ws, refs, tolerances)
    status, message = classify_check(outputs, guards, mutated, req.check.max_bad_fraction)
    return CheckRound(phase, seed, status, outputs, guards, mutated, message), spent


def _reference(session: Session, req: EvalRequest, ws: Workspace, seed: int) -> checks.RefBuffers:
    ref: ReferenceSpec = req.reference
    if ref.kind in FUNCTION_KINDS:
        identity: Any = (ref.kind, ref.function, ref.base_dir)
    elif ref.kind == "kernel" and ref.kernel is not None:
        identity = ("kernel", ref.kernel.cubin, ref.kernel.symbol, ref.kernel.launch)
    else:
        raise checks.ReferenceFailure(f"unknown reference kind {ref.kind!r}")
    key = (identity, tuple(sorted(req.task.dims.items())), seed,
           tuple((a.name, a.dtype, a.shape, a.init, a.value) for a in req.task.args))
    cached = session.refs.get(key)
    if cached is not None:
        return cached
    if ref.kind in FUNCTION_KINDS:
        assert ref.function is not None
        fn = load_reference(ref.kind, ref.function, ref.base_dir)
        buffers = (checks.numpy_reference(ws, fn) if ref.kind == "numpy"
                   else device_reference(ws, fn, ref.kind))
    else:
        assert ref.kernel is not None
        buffers = checks.kernel_reference(ws, ref.kernel)
    session.refs.put(key, buffers)
    return buffers


def launch_for_profile(session: Session, req: EvalRequest, warmup: int, seed: int
                       ) -> dict[str, Any]:
    """Prepare seeded inputs, launch `warmup` times, then once more for ncu to profile.

    Nothing is verified here: under ncu's replay a reference kernel of the same name would be
    counted as a launch too. The profiled candidate is the one `evaluate` verified. Inout
    arrays are restored before every launch, as before every timed one, so the profiled launch
    works on the same data as the verified and timed ones (a warm-up must not pre-digest it).
    """
    gpu, cand = session.gpu, req.candidate
    kernel = gpu.kernel(cand.cubin, cand.symbol)
    gpu.allow_dynamic_shared(kernel, cand.launch.shared_mem)
    ws = Workspace(gpu, req.harness, req.task.args)
    try:
        ws.prepare(seed)
        t0 = time.perf_counter()
        for _ in range(warmup + 1):
            ws.restore_inouts()
            gpu.launch(kernel, cand.launch.grid, cand.launch.block, cand.launch.shared_mem,
                       *ws.kernel_args())
        gpu.sync()
        return {"launches": warmup + 1, "seconds": time.perf_counter() - t0}
    finally:
        with suppress(CudaFailure):
            ws.close()
