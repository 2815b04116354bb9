"""The CPU's worker side (`python -m pragma_ncu.worker --side pragma_ncu.backends.cpu.worker`,
`worker_command`): hello answers with the host's
facts, `evaluate` verifies, times and re-verifies a C kernel in a shared object, `ceiling`
measures the host's copy bandwidth.

The candidate is `candidate.cubin` (here the path of a .so) and `candidate.symbol` (a C
function), called through ctypes on NumPy arrays with the arguments in the task's order: arrays
by address, scalars by value as their C type. Nothing here imports CUDA. A kernel that crashes
or hangs takes the worker with it; the parent's Runner reports that.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from pragma_ncu.backends.cpu import abi
from pragma_ncu.backends.cpu.worker import timing as cpu_timing
from pragma_ncu.backends.cpu.worker.host import host_info
from pragma_ncu.backends.cpu.worker.workspace import (
    Counts,
    HostWorkspace,
    RefArrays,
    aligned_bytes,
    poison,
    run_checks,
    storage,
)
from pragma_ncu.infra.settings import Settings
from pragma_ncu.measure.measurement import Measurement, OutputCheck, Status
from pragma_ncu.measure.stats import TimingStats
from pragma_ncu.spec.model import ResolvedArg
from pragma_ncu.worker import serve
from pragma_ncu.worker.measure import measure
from pragma_ncu.worker.protocol import (
    EvalRequest,
    KernelRef,
    TimingConfig,
    eval_request_from_dict,
)
from pragma_ncu.worker.reference import (
    ReferenceCache,
    ReferenceFailure,
    load_reference,
    reference_key,
    run_host_reference,
)

CEILING_BYTES = 256 << 20


def worker_command(settings: Settings) -> list[str]:
    """The command that serves this side."""
    return serve.command(settings.python, __name__)

MIN_REFERENCE_BUDGET = 64 << 20


class HostState:
    """State a CPU worker keeps across requests: host facts, loaded libraries, reference outputs
    and the cache flusher (allocated once, on first use)."""

    def __init__(self, host: dict[str, Any] | None = None) -> None:
        self.host = host if host is not None else host_info()
        self.memory_bytes = int(self.host["memory_bytes"])
        self.libraries: dict[str, ctypes.CDLL] = {}
        self.refs: ReferenceCache[RefArrays] = ReferenceCache(
            max(MIN_REFERENCE_BUDGET, self.memory_bytes // 8),
            lambda arrays: sum(v.nbytes for v in arrays.values()))
        self._flusher: cpu_timing.Flusher | None = None

    def flusher(self) -> cpu_timing.Flusher:
        if self._flusher is None:
            self._flusher = cpu_timing.Flusher(int(self.host["llc_bytes"]))
        return self._flusher

    def function(self, path: str, symbol: str, args: tuple[ResolvedArg, ...]) -> Any:
        """`symbol` in the shared object at `path`, typed for `args`; OSError when the library
        cannot be loaded, AttributeError when it has no such symbol.

        Libraries are cached by path: the dynamic loader would hand back the library already
        mapped under a path anyway, so a changed file needs a new path (builds are hashed).
        """
        lib = self.libraries.get(path)
        if lib is None:
            lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL)  # local: two candidates' symbols never mix
            self.libraries[path] = lib
        fn = lib[symbol]  # a fresh function object, so argtypes set here stay with this task
        fn.argtypes = [abi.ctypes_scalar(a.dtype) if a.role == "scalar" else ctypes.c_void_p
                       for a in args]
        fn.restype = None
        return fn


def evaluate(session: HostState, req: EvalRequest) -> Measurement:
    """Measure one candidate; its expected failures come back as a status."""
    start = time.perf_counter()
    task, cand = req.task, req.candidate
    base = Measurement(status=Status.OK, shape=task.shape_name, bytes_moved=task.bytes_moved,
                       flops=task.flops)
    unsupported = sorted({a.dtype for a in task.args if not abi.supported(a.dtype)})
    if unsupported:
        return replace(base, status=Status.LAUNCH_ERROR,
                       message=f"no C type on the CPU for {', '.join(unsupported)}; "
                               f"use one of {', '.join(abi.C_TYPES)}")
    try:
        fn = session.function(cand.cubin, cand.symbol, task.args)
    except (OSError, AttributeError) as exc:
        return replace(base, status=Status.LAUNCH_ERROR, message=f"cannot load kernel: {exc}",
                       seconds=time.perf_counter() - start)
    return measure(CpuInstance(session, req, HostWorkspace(task.args), fn), req, base, start)


class CpuInstance:
    """The candidate loaded in this process with its host arrays: what `measure.measure`
    drives."""

    def __init__(self, session: HostState, req: EvalRequest, ws: HostWorkspace,
                 fn: Any) -> None:
        self.session, self.req, self.ws, self.fn = session, req, ws, fn
        self.args = ws.call_args()  # the addresses never change: prepare() refills the buffers

    def call(self) -> None:
        self.fn(*self.args)

    def prepare(self, seed: int) -> None:
        self.ws.prepare(seed)

    def reference(self, seed: int) -> RefArrays:
        return self.session.refs.computed(reference_key(self.req, seed), self._compute)

    def _compute(self) -> RefArrays:
        ref = self.req.reference
        if ref.kernel is not None and ref.kind == "kernel":
            return kernel_reference(self.session, self.ws, ref.kernel)
        assert ref.function is not None
        fn = load_reference(ref.kind, ref.function, ref.base_dir, on_gpu=False)
        return numpy_reference(self.ws, fn, ref.kind)

    def run(self) -> None:
        self.call()

    def check(self, refs: RefArrays, tolerances: dict[str, tuple[float, float]]
              ) -> tuple[tuple[OutputCheck, ...], Counts, Counts]:
        return run_checks(self.ws, refs, tolerances)

    def time(self, cfg: TimingConfig) -> tuple[TimingStats, float | None]:
        flush = self.session.flusher() if cfg.flush_l2 else None
        stats = cpu_timing.time_call(self.call, self.ws.restore_inouts, flush, cfg)
        copy_us = (cpu_timing.time_copy(self.session.flusher(), self.req.task.bytes_moved,
                                        self.session.memory_bytes)
                   if cfg.copy_reference else None)
        return stats, copy_us


def numpy_reference(ws: HostWorkspace, fn: Callable[..., Any], library: str = "numpy"
                    ) -> RefArrays:
    """Run a NumPy (or CPU torch) reference on copies of the current inputs, in higher
    precision; its outputs flat, as the reference dtype."""
    return run_host_reference(fn, ws.args, ws.read, library)

def kernel_reference(session: HostState, ws: HostWorkspace, ref: KernelRef) -> RefArrays:
    """Call the reference kernel on the current inputs into its own (aligned) output arrays."""
    try:
        fn = session.function(ref.cubin, ref.symbol, ws.args)
    except (OSError, AttributeError) as exc:
        raise ReferenceFailure(f"cannot load the reference kernel: {exc}") from None
    arrays: RefArrays = {}
    addresses: dict[str, int] = {}
    for a in ws.args:
        if a.role not in ("output", "inout"):
            continue
        buf, start = aligned_bytes(a.nbytes)
        data = buf[start: start + a.nbytes]
        if a.role == "inout":
            np.copyto(data, ws.arrays[a.name].data)
        else:
            poison(data, a.dtype)
        addresses[a.name] = int(buf.ctypes.data) + start
        arrays[a.name] = data.view(storage(a.dtype))  # the view keeps `buf` alive
    fn(*ws.call_args(addresses))
    return arrays


def ceiling(session: HostState, nbytes: int = CEILING_BYTES) -> dict[str, Any]:
    """The host's copy-bandwidth ceiling: {"gbps", "method", "methods", "bytes"}, on a buffer of
    `nbytes` (at most an eighth of memory)."""
    return cpu_timing.measure_ceiling(nbytes, session.memory_bytes, int(session.host["cores"]))


class CpuSide:
    """The CPU worker's answers; its state (library and reference caches) outlives requests."""

    def __init__(self) -> None:
        self.state: HostState | None = None

    def hello(self) -> dict[str, Any]:
        if self.state is None:
            self.state = HostState()
        return {"ok": True, "device": self.state.host}

    def handle(self, op: str, message: dict[str, Any]) -> dict[str, Any] | None:
        assert self.state is not None
        if op == "evaluate":
            result = evaluate(self.state, eval_request_from_dict(message))
            return {"ok": True, "measurement": result.to_json(), "fatal": False}
        if op == "ceiling":
            return {"ok": True, "ceiling": ceiling(self.state,
                                                   int(message.get("bytes", CEILING_BYTES)))}
        if op == "launch":  # it exists for ncu, which profiles GPU kernels only
            return {"ok": False, "kind": "protocol", "error": "the CPU worker has no 'launch' op"}
        return None


def make_side() -> CpuSide:
    return CpuSide()
