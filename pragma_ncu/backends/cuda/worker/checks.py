"""References and checks: compute the expected outputs, then compare, check guards and inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pragma_ncu.backends.cuda.worker.gpu import DeviceMemory, Gpu
from pragma_ncu.backends.cuda.worker.workspace import Workspace
from pragma_ncu.measure.measurement import OutputCheck
from pragma_ncu.spec import dtypes
from pragma_ncu.worker.guards import GUARD_BYTE, GUARD_BYTES, POISON
from pragma_ncu.worker.protocol import KernelRef
from pragma_ncu.worker.reference import ReferenceFailure as ReferenceFailure
from pragma_ncu.worker.reference import load_function as load_function
from pragma_ncu.worker.reference import run_numpy_reference

# ReferenceFailure and load_function live in the CUDA-free `reference` module (the CPU worker uses
# them too); the explicit re-exports above keep `checks.ReferenceFailure` etc. working for callers.

RefBuffers = dict[str, tuple[DeviceMemory, str]]  # output name -> (buffer, its dtype name)
REF_NAME = {"float32": "fp32", "float64": "fp64", "int64": "int64"}  # reference dtype -> name


def numpy_reference(ws: Workspace, fn: Callable[..., Any]) -> RefBuffers:
    """Run a NumPy reference on the current inputs; upload its outputs in higher precision."""
    buffers: RefBuffers = {}
    for name, host in run_numpy_reference(fn, ws.args, ws.download).items():
        mem = ws.gpu.alloc(host.nbytes)
        ws.gpu.upload(mem.ptr, host)
        buffers[name] = (mem, REF_NAME[host.dtype.name])
    return buffers

def kernel_reference(ws: Workspace, ref: KernelRef) -> RefBuffers:
    """Run the reference kernel on the current inputs into its own output buffers."""
    gpu = ws.gpu
    buffers: RefBuffers = {}
    for a in ws.args:
        if a.role in ("output", "inout"):
            mem = gpu.alloc(a.nbytes)
            if a.role == "inout":
                gpu.copy(mem.ptr, ws.arrays[a.name].ptr, a.nbytes)
            else:
                ws.fill(mem.ptr, a.nbytes, a.itemsize, POISON[a.dtype])
            buffers[a.name] = (mem, a.dtype)
    kernel = gpu.kernel(ref.cubin, ref.symbol)
    gpu.allow_dynamic_shared(kernel, ref.launch.shared_mem)
    args = ws.kernel_args({name: mem.ptr for name, (mem, _) in buffers.items()})
    gpu.launch(kernel, ref.launch.grid, ref.launch.block, ref.launch.shared_mem, *args)
    gpu.sync()
    return buffers


def _dtype(name: str) -> dtypes.DType:
    found = dtypes.lookup(name)
    assert found is not None, name
    return found


def buffers_bytes(buffers: RefBuffers) -> int:
    """Device bytes a set of reference outputs holds (for the reference cache's budget)."""
    return sum(mem.nbytes for mem, _ in buffers.values())


def free(gpu: Gpu, buffers: RefBuffers) -> None:
    for mem, _ in buffers.values():
        gpu.free(mem)


Counts = tuple[tuple[str, int], ...]  # (array name, bytes)


def run_checks(ws: Workspace, refs: RefBuffers, tolerances: dict[str, tuple[float, float]]
               ) -> tuple[tuple[OutputCheck, ...], Counts, Counts]:
    """Compare outputs with the reference, and check guards and inputs: all on the GPU, one copy
    of the counters back to the host."""
    gpu = ws.gpu
    outs = [a for a in ws.args if a.role in ("output", "inout")]
    arrays = list(ws.arrays.values())
    inputs = [arr for arr in arrays if arr.arg.role == "input"]
    init = np.zeros(6 * len(outs) + 2 * len(arrays) + len(inputs), dtype=np.uint64)
    for k in range(len(outs)):
        init[6 * k + 5] = np.iinfo(np.uint64).max
    gpu.sync()
    gpu.upload(ws.counters.ptr, init)
    slot = ws.counters.ptr
    for a in outs:
        mem, ref_name = refs[a.name]
        atol, rtol = tolerances.get(a.name, (_dtype(a.dtype).atol, _dtype(a.dtype).rtol))
        check_poison = int(a.itemsize >= 2)
        gpu.launch(ws.h(f"compare_{a.dtype}_{ref_name}"), gpu.grid_for(a.numel), (256, 1, 1), 0,
                   ws.arrays[a.name].ptr, mem.ptr, np.uint64(a.numel), np.float64(atol),
                   np.float64(rtol), np.uint64(POISON[a.dtype]), np.int32(check_poison), slot)
        slot += 48
    for arr in arrays:
        for ptr, n in ((arr.mem.ptr, GUARD_BYTES), (arr.tail_ptr, arr.tail_bytes)):
            gpu.launch(ws.h("count_ne_u8"), gpu.grid_for(n), (256, 1, 1), 0, ptr, np.uint64(n),
                       np.uint8(GUARD_BYTE), slot)
            slot += 8
    for arr in inputs:
        assert arr.pristine is not None
        gpu.launch(ws.h("count_diff_u8"), gpu.grid_for(arr.nbytes), (256, 1, 1), 0, arr.ptr,
                   arr.pristine.ptr, np.uint64(arr.nbytes), slot)
        slot += 8
    counts = gpu.download(ws.counters.ptr, init.nbytes, np.uint64)
    checks = tuple(_output_check(ws, a, refs[a.name], counts[6 * k: 6 * k + 6])
                   for k, a in enumerate(outs))
    base = 6 * len(outs)
    guards = tuple((arr.arg.name, int(counts[base + 2 * i] + counts[base + 2 * i + 1]))
                   for i, arr in enumerate(arrays) if counts[base + 2 * i: base + 2 * i + 2].any())
    base += 2 * len(arrays)
    mutated = tuple((arr.arg.name, int(counts[base + i])) for i, arr in enumerate(inputs)
                    if counts[base + i])
    return checks, guards, mutated


def _output_check(ws: Workspace, a: Any, ref: tuple[DeviceMemory, str],
                  c: np.ndarray) -> OutputCheck:
    first = None if c[5] == np.iinfo(np.uint64).max else int(c[5])
    sample_out = sample_ref = None
    if first is not None:
        sample_out = _element(ws.gpu, ws.arrays[a.name].ptr, first, a.dtype)
        sample_ref = _element(ws.gpu, ref[0].ptr, first, ref[1])
    return OutputCheck(
        name=a.name, numel=a.numel, bad=int(c[0]), unwritten=int(c[1]), nan_out=int(c[2]),
        max_abs=float(c[3:4].view(np.float64)[0]), max_rel=float(c[4:5].view(np.float64)[0]),
        first_bad=first, sample_out=sample_out, sample_ref=sample_ref,
    )


def _element(gpu: Gpu, ptr: int, index: int, dtype_name: str) -> float:
    d = _dtype(dtype_name)
    raw = gpu.download(ptr + index * d.itemsize, d.itemsize, d.numpy_storage)
    return float(dtypes.to_reference(d, raw)[0])
