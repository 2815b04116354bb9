"""torch and CuPy references on the GPU, inside the worker.

The inputs never leave the device: each array of the workspace is handed to the library as
`__cuda_array_interface__` (the protocol both take memory they do not own by, without a copy),
then converted to its reference dtype, which makes a copy the reference may change freely
(fp16 and bf16 to float32, integers to int64: the NumPy rules of `worker.reference`). The
reference runs on the library's own stream; the worker synchronizes the device before and
after it, copies each output (flattened, in its reference dtype) into a buffer of its own, and
compares those with the same comparison kernels as a NumPy reference's outputs. Then the
library's cached memory is handed back, so the next candidate's arrays find it free.

Only this module imports torch or CuPy, and only when a spec asks for them.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any, Protocol

import numpy as np

from pragma_ncu.backends.cuda.worker.checks import REF_NAME, RefBuffers
from pragma_ncu.backends.cuda.worker.workspace import Workspace
from pragma_ncu.spec import dtypes
from pragma_ncu.worker.reference import (
    ReferenceFailure,
    call_reference,
    check_size,
    import_library,
    outputs,
    outputs_by_name,
)


class CudaArray:
    """A device buffer seen through `__cuda_array_interface__` (version 3, C order)."""

    def __init__(self, ptr: int, shape: tuple[int, ...], typestr: str) -> None:
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (int(ptr), False),
            "strides": None, "version": 3, "stream": None,  # the worker synchronizes itself
        }


class Arrays(Protocol):
    """What the device path needs of an array library."""

    def to_reference(self, ptr: int, shape: tuple[int, ...], dtype: str) -> Any: ...
    def flat(self, value: Any, reference: np.dtype) -> Any: ...
    def pointer(self, array: Any) -> tuple[int, int]: ...  # (address, bytes)
    def size(self, array: Any) -> int: ...
    def synchronize(self) -> None: ...
    def release(self) -> None: ...


class TorchArrays:
    """torch tensors on the current CUDA device."""

    # torch reads unsigned 16/32/64-bit typestrs only in recent versions: read the bits signed
    _TYPESTR = {"bf16": "<i2", "uint32": "<i4", "uint64": "<i8"}

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.reference = {np.dtype("float32"): torch.float32, np.dtype("float64"): torch.float64,
                          np.dtype("int64"): torch.int64}

    def to_reference(self, ptr: int, shape: tuple[int, ...], dtype: str) -> Any:
        t, d = self.torch, _dtype(dtype)
        typestr = self._TYPESTR.get(dtype, d.numpy_storage.str)
        raw = t.as_tensor(CudaArray(ptr, shape, typestr), device="cuda")
        if dtype == "bf16":
            raw = raw.view(t.bfloat16)
        out = raw.to(dtype=self.reference[d.reference_dtype], copy=True)
        return out & 0xFFFFFFFF if dtype == "uint32" else out  # the int32 bits, unsigned again

    def flat(self, value: Any, reference: np.dtype) -> Any:
        t = self.torch
        tensor = value.detach() if hasattr(value, "detach") else value
        tensor = t.as_tensor(tensor, device="cuda")
        return tensor.to(dtype=self.reference[reference]).reshape(-1).contiguous()

    def pointer(self, array: Any) -> tuple[int, int]:
        return int(array.data_ptr()), int(array.numel()) * int(array.element_size())

    def size(self, array: Any) -> int:
        return int(array.numel())

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    def release(self) -> None:
        self.torch.cuda.empty_cache()


class CupyArrays:
    """CuPy arrays on the current CUDA device."""

    def __init__(self, cupy: Any) -> None:
        self.cp = cupy

    def to_reference(self, ptr: int, shape: tuple[int, ...], dtype: str) -> Any:
        cp, d = self.cp, _dtype(dtype)
        raw = cp.asarray(CudaArray(ptr, shape, d.numpy_storage.str))
        if dtype == "bf16":  # no bf16 in CuPy: the bits are the top half of a float32
            return (raw.astype(cp.uint32) << cp.uint32(16)).view(cp.float32)
        return raw.astype(d.reference_dtype)  # astype copies

    def flat(self, value: Any, reference: np.dtype) -> Any:
        cp = self.cp
        return cp.ascontiguousarray(cp.asarray(value).astype(reference, copy=False).reshape(-1))

    def pointer(self, array: Any) -> tuple[int, int]:
        return int(array.data.ptr), int(array.nbytes)

    def size(self, array: Any) -> int:
        return int(array.size)

    def synchronize(self) -> None:
        self.cp.cuda.runtime.deviceSynchronize()

    def release(self) -> None:
        self.cp.get_default_memory_pool().free_all_blocks()


def arrays_for(library: str) -> Arrays:
    """The adapter of `library` ("torch" or "cupy"); ReferenceFailure when it cannot be used."""
    if library == "torch":
        return TorchArrays(import_library("torch"))
    if library == "cupy":
        return CupyArrays(import_library("cupy"))
    raise ReferenceFailure(f"no device reference for library {library!r}")


def device_reference(ws: Workspace, fn: Any, library: str) -> RefBuffers:
    """Run a torch or CuPy reference on the workspace's current inputs, on the GPU; its
    outputs in device buffers of the worker's own, in their reference dtypes."""
    arrays = arrays_for(library)
    gpu, outs = ws.gpu, outputs(ws.args)
    gpu.sync()  # the inputs prepare() generated are complete
    try:
        kwargs: dict[str, Any] = {}
        for a in ws.args:
            if a.role == "scalar":
                kwargs[a.name] = a.value
            elif a.role in ("input", "inout"):
                kwargs[a.name] = _wrapped(arrays, library, ws.arrays[a.name].ptr, a.shape, a.dtype)
        by_name = outputs_by_name(call_reference(fn, kwargs), [a.name for a in outs])
        flats = {}
        for a in outs:
            reference = _dtype(a.dtype).reference_dtype
            try:
                flats[a.name] = (arrays.flat(by_name[a.name], reference), reference)
            except Exception as exc:
                raise ReferenceFailure(f"reference output {a.name!r} is not a {library} array "
                                       f"of numbers: {exc!r}") from None
            check_size(a, arrays.size(flats[a.name][0]))
        try:
            arrays.synchronize()
        except Exception as exc:  # an error the reference's kernels raised asynchronously
            raise ReferenceFailure(f"the {library} reference failed on the GPU: {exc!r}") from None
        return _copied(ws, flats, arrays)
    finally:
        with suppress(Exception):  # after a failure on the device, this may fail too
            arrays.release()


def _wrapped(arrays: Arrays, library: str, ptr: int, shape: tuple[int, ...], dtype: str) -> Any:
    try:
        return arrays.to_reference(ptr, shape, dtype)
    except Exception as exc:  # a library too old for a dtype, say
        raise ReferenceFailure(f"{library} cannot take a {dtype} input: {exc!r}") from None


def _copied(ws: Workspace, flats: dict[str, tuple[Any, np.dtype]], arrays: Arrays
            ) -> RefBuffers:
    buffers: RefBuffers = {}
    try:
        for name, (flat, reference) in flats.items():
            ptr, nbytes = arrays.pointer(flat)
            mem = ws.gpu.alloc(nbytes)
            buffers[name] = (mem, REF_NAME[reference.name])
            ws.gpu.copy(mem.ptr, ptr, nbytes)
        ws.gpu.sync()  # the copies are done before the library may reuse its memory
    except BaseException:
        for mem, _ in buffers.values():
            ws.gpu.free(mem)
        raise
    return buffers


def _dtype(name: str) -> dtypes.DType:
    found = dtypes.lookup(name)
    assert found is not None, name
    return found
