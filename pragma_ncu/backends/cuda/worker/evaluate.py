"""One `evaluate` request: verify, time, re-verify a candidate at one shape."""

from __future__ import annotations

import time
from contextlib import suppress
from dataclasses import replace
from typing import Any

from pragma_ncu.backends.cuda.worker import checks, timing
from pragma_ncu.backends.cuda.worker.device_reference import device_reference
from pragma_ncu.backends.cuda.worker.gpu import CudaFailure, Gpu
from pragma_ncu.backends.cuda.worker.workspace import Workspace
from pragma_ncu.measure.measurement import Measurement, OutputCheck, Status
from pragma_ncu.measure.stats import TimingStats
from pragma_ncu.worker.measure import measure
from pragma_ncu.worker.protocol import EvalRequest, ReferenceSpec, TimingConfig
from pragma_ncu.worker.reference import (
    FUNCTION_KINDS,
    ReferenceCache,
    load_reference,
    reference_key,
)


class Session:
    """State a worker keeps across requests: the GPU, reference outputs, the L2 flusher."""

    def __init__(self, gpu: Gpu) -> None:
        self.gpu = gpu
        self.refs: ReferenceCache[checks.RefBuffers] = ReferenceCache(
            gpu.memory_free() // 4, checks.buffers_bytes, lambda old: checks.free(gpu, old))
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
        return measure(GpuInstance(session, req, ws, kernel), req, base, start)
    except CudaFailure as exc:
        status = Status.RUNTIME_ERROR if exc.fatal else Status.LAUNCH_ERROR
        return replace(base, status=status, message=str(exc), extra={"fatal": exc.fatal},
                       seconds=time.perf_counter() - start)
    finally:
        if ws is not None:
            with suppress(CudaFailure):  # after a sticky error, frees fail too
                ws.close()


class GpuInstance:
    """The candidate loaded on the GPU with its workspace: what `measure.measure` drives."""

    def __init__(self, session: Session, req: EvalRequest, ws: Workspace, kernel: Any) -> None:
        self.session, self.req, self.ws, self.kernel = session, req, ws, kernel

    def launch(self, overrides: dict[str, int] | None = None, target: Any = None) -> None:
        launch = self.req.candidate.launch
        self.session.gpu.launch(self.kernel, launch.grid, launch.block, launch.shared_mem,
                                *self.ws.kernel_args(overrides), target=target)

    def prepare(self, seed: int) -> None:
        self.ws.prepare(seed)

    def reference(self, seed: int) -> checks.RefBuffers:
        try:
            return self.session.refs.computed(reference_key(self.req, seed), self._compute)
        except CudaFailure as exc:
            if exc.fatal:
                raise
            raise checks.ReferenceFailure(str(exc)) from None

    def _compute(self) -> checks.RefBuffers:
        ref: ReferenceSpec = self.req.reference
        if ref.kind in FUNCTION_KINDS:
            assert ref.function is not None
            fn = load_reference(ref.kind, ref.function, ref.base_dir)
            return (checks.numpy_reference(self.ws, fn) if ref.kind == "numpy"
                    else device_reference(self.ws, fn, ref.kind))
        assert ref.kernel is not None
        return checks.kernel_reference(self.ws, ref.kernel)

    def run(self) -> None:
        self.launch()
        self.session.gpu.sync()

    def check(self, refs: checks.RefBuffers, tolerances: dict[str, tuple[float, float]]
              ) -> tuple[tuple[OutputCheck, ...], checks.Counts, checks.Counts]:
        return checks.run_checks(self.ws, refs, tolerances)

    def time(self, cfg: TimingConfig) -> tuple[TimingStats, float | None]:
        flusher = self.session.flusher(self.req.harness)
        stats = timing.time_launch(self.session.gpu, self.ws, self.launch, flusher, cfg)
        # A copy is timed one launch at a time, so it is only comparable with the same mode.
        copy_us = (timing.time_copy(self.session.gpu, flusher, self.req.task.bytes_moved)
                   if cfg.copy_reference and stats.mode == "events" else None)
        return stats, copy_us


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
