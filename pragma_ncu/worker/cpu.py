"""One `evaluate` request on the CPU: verify, time, re-verify a C kernel in a shared object.

The CPU twin of `evaluate.py`: the candidate is `candidate.cubin` (here the path of a .so) and
`candidate.symbol` (a C function), called through ctypes on NumPy arrays with the arguments in
the task's order: arrays by address, scalars by value as their C type. Nothing here imports
CUDA. A kernel that crashes or hangs takes the worker with it; the parent's Runner reports that.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from pragma_ncu.cpu import abi
from pragma_ncu.measurement import CheckRound, Measurement, Status, classify_check
from pragma_ncu.spec import ResolvedArg
from pragma_ncu.worker import cpu_timing
from pragma_ncu.worker.cpu_workspace import (
    HostWorkspace,
    RefArrays,
    aligned_bytes,
    poison,
    run_checks,
    storage,
)
from pragma_ncu.worker.host import host_info
from pragma_ncu.worker.protocol import EvalRequest, KernelRef
from pragma_ncu.worker.reference import (
    FUNCTION_KINDS,
    ReferenceFailure,
    load_reference,
    run_host_reference,
)

CEILING_BYTES = 256 << 20
MIN_REFERENCE_BUDGET = 64 << 20


class ReferenceCache:
    """Reference outputs keyed by (reference, dims, seed, args); the least recently used go first
    once they take more than `budget_bytes` (the newest entry always stays)."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget = budget_bytes
        self.entries: OrderedDict[Any, RefArrays] = OrderedDict()

    def get(self, key: Any) -> RefArrays | None:
        if key in self.entries:
            self.entries.move_to_end(key)
            return self.entries[key]
        return None

    def put(self, key: Any, arrays: RefArrays) -> None:
        self.entries[key] = arrays
        while len(self.entries) > 1 and self._bytes() > self.budget:
            self.entries.popitem(last=False)

    def _bytes(self) -> int:
        return sum(v.nbytes for arrays in self.entries.values() for v in arrays.values())


class CpuSession:
    """State a CPU worker keeps across requests: host facts, loaded libraries, reference outputs
    and the cache flusher (allocated once, on first use)."""

    def __init__(self, host: dict[str, Any] | None = None) -> None:
        self.host = host if host is not None else host_info()
        self.memory_bytes = int(self.host["memory_bytes"])
        self.libraries: dict[str, ctypes.CDLL] = {}
        self.refs = ReferenceCache(max(MIN_REFERENCE_BUDGET, self.memory_bytes // 8))
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


def evaluate(session: CpuSession, req: EvalRequest) -> Measurement:
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
    return _measure(session, req, HostWorkspace(task.args), fn, base, start)


def _measure(session: CpuSession, req: EvalRequest, ws: HostWorkspace, fn: Any,
             base: Measurement, start: float) -> Measurement:
    args = ws.call_args()  # the addresses never change: prepare() refills the same buffers

    def call() -> None:
        fn(*args)

    rounds: list[CheckRound] = []
    ref_seconds = 0.0
    result = base
    for index, seed in enumerate(req.check.seeds):
        phase = "verify" if index == 0 else "reverify"
        if index == 1 and req.timing is not None:
            result = _timed(session, req, ws, call, result)
        check, spent = _check_round(session, req, ws, call, phase, seed)
        ref_seconds += spent
        rounds.append(check)
        if check.status is not Status.OK:
            return replace(result, status=check.status, message=f"{phase}: {check.message}",
                           checks=tuple(rounds), timing=None, reference_seconds=ref_seconds,
                           seconds=time.perf_counter() - start)
    if len(req.check.seeds) < 2 and req.timing is not None:
        result = _timed(session, req, ws, call, result)
    return replace(result, checks=tuple(rounds), reference_seconds=ref_seconds,
                   seconds=time.perf_counter() - start)


def _timed(session: CpuSession, req: EvalRequest, ws: HostWorkspace, call: Callable[[], None],
           result: Measurement) -> Measurement:
    cfg = req.timing
    assert cfg is not None
    ws.prepare(req.check.seeds[0] if req.check.seeds else 1)  # never time on poison or zeros
    flush = session.flusher() if cfg.flush_l2 else None
    stats = cpu_timing.time_call(call, ws.restore_inouts, flush, cfg)
    copy_us = (cpu_timing.time_copy(session.flusher(), req.task.bytes_moved, session.memory_bytes)
               if cfg.copy_reference else None)
    return replace(result, timing=stats, copy_us=copy_us)


def _check_round(session: CpuSession, req: EvalRequest, ws: HostWorkspace,
                 call: Callable[[], None], phase: str, seed: int) -> tuple[CheckRound, float]:
    ws.prepare(seed)
    t0 = time.perf_counter()
    try:
        refs = _reference(session, req, ws, seed)  # before the call: inouts still hold inputs
    except ReferenceFailure as exc:
        return CheckRound(phase, seed, Status.REFERENCE_ERROR, message=str(exc)), 0.0
    spent = time.perf_counter() - t0
    call()
    tolerances = {name: (atol, rtol) for name, atol, rtol in req.check.tolerances}
    outputs, guards, mutated = run_checks(ws, refs, tolerances)
    status, message = classify_check(outputs, guards, mutated, req.check.max_bad_fraction)
    return CheckRound(phase, seed, status, outputs, guards, mutated, message), spent


def _reference(session: CpuSession, req: EvalRequest, ws: HostWorkspace, seed: int) -> RefArrays:
    ref = req.reference
    if ref.kind in FUNCTION_KINDS and ref.function:
        identity: tuple[Any, ...] = (ref.kind, ref.function, ref.base_dir)
    elif ref.kind == "kernel" and ref.kernel is not None:
        identity = ("kernel", ref.kernel.cubin, ref.kernel.symbol)
    else:
        raise ReferenceFailure(f"reference kind {ref.kind!r} needs a function ("
                               f"{', '.join(FUNCTION_KINDS)}) or a kernel (kernel)")
    key = (identity, tuple(sorted(req.task.dims.items())), seed,
           tuple((a.name, a.dtype, a.shape, a.init, a.value) for a in req.task.args))
    cached = session.refs.get(key)
    if cached is not None:
        return cached
    if ref.kernel is not None and ref.kind == "kernel":
        arrays = kernel_reference(session, ws, ref.kernel)
    else:
        assert ref.function is not None
        fn = load_reference(ref.kind, ref.function, ref.base_dir, on_gpu=False)
        arrays = numpy_reference(ws, fn, ref.kind)
    session.refs.put(key, arrays)
    return arrays


def numpy_reference(ws: HostWorkspace, fn: Callable[..., Any], library: str = "numpy"
                    ) -> RefArrays:
    """Run a NumPy (or CPU torch) reference on copies of the current inputs, in higher
    precision; its outputs flat, as the reference dtype."""
    return run_host_reference(fn, ws.args, ws.read, library)

def kernel_reference(session: CpuSession, ws: HostWorkspace, ref: KernelRef) -> RefArrays:
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


def ceiling(session: CpuSession, nbytes: int = CEILING_BYTES) -> dict[str, Any]:
    """The host's copy-bandwidth ceiling: {"gbps", "method", "methods", "bytes"}, on a buffer of
    `nbytes` (at most an eighth of memory)."""
    return cpu_timing.measure_ceiling(nbytes, session.memory_bytes, int(session.host["cores"]))
