"""Device arrays for one evaluation: guarded buffers, seeded inputs, poison, and the checks.

Every array sits between two guard regions filled with a byte pattern; a write past either end
changes a guard. Outputs are filled with a NaN pattern (a sentinel for integers) before each run,
so elements the kernel never writes are found. Inputs are snapshotted and compared byte for byte
after the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from pragma_ncu.backends.cuda.worker.gpu import DeviceMemory, Gpu
from pragma_ncu.spec import dtypes
from pragma_ncu.spec.model import ResolvedArg
from pragma_ncu.worker.guards import GUARD_BYTE, GUARD_BYTES, POISON
from pragma_ncu.worker.inputs import array_seed

_FILL = {1: ("fill_u8", np.uint8), 2: ("fill_u16", np.uint16), 4: ("fill_u32", np.uint32),
         8: ("fill_u64", np.uint64)}
_SCALAR = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64, "int8": np.int8,
           "uint8": np.uint8, "int32": np.int32, "uint32": np.uint32, "int64": np.int64,
           "uint64": np.uint64}


def scalar_value(arg: ResolvedArg) -> Any:
    """A kernel argument of the right width for a scalar."""
    if arg.dtype == "bf16":
        return np.uint16(dtypes.f32_to_bf16(np.array([arg.value], dtype=np.float32))[0])
    return _SCALAR[arg.dtype](cast(Any, arg.value))


@dataclass
class DeviceArray:
    arg: ResolvedArg
    mem: DeviceMemory  # guard + data + guard
    pristine: DeviceMemory | None  # snapshot of inputs/inouts before the run

    @property
    def ptr(self) -> int:
        return self.mem.ptr + GUARD_BYTES

    @property
    def nbytes(self) -> int:
        return self.arg.nbytes

    @property
    def tail_ptr(self) -> int:
        return self.ptr + self.nbytes

    @property
    def tail_bytes(self) -> int:
        return self.mem.nbytes - GUARD_BYTES - self.nbytes


class Workspace:
    """The arrays of one task at one shape on the device, plus the harness kernels."""

    def __init__(self, gpu: Gpu, harness: str, args: tuple[ResolvedArg, ...]) -> None:
        self.gpu, self.harness, self.args = gpu, harness, args
        self.arrays: dict[str, DeviceArray] = {}
        arrays = sum(1 for a in args if a.role != "scalar")
        self.counters = gpu.alloc(8 * (6 * arrays + 3 * arrays + 8))
        for a in args:
            if a.role == "scalar":
                continue
            padded = -(-a.nbytes // 256) * 256
            mem = gpu.alloc(GUARD_BYTES + padded + GUARD_BYTES)
            snap = gpu.alloc(a.nbytes) if a.role in ("input", "inout") else None
            self.arrays[a.name] = DeviceArray(a, mem, snap)
        # Guards and contents are written by prepare(), which precedes every launch.

    def close(self) -> None:
        for arr in self.arrays.values():
            self.gpu.free(arr.mem)
            if arr.pristine is not None:
                self.gpu.free(arr.pristine)
        self.gpu.free(self.counters)
        self.arrays.clear()

    def h(self, name: str) -> Any:
        return self.gpu.kernel(self.harness, name)

    def fill(self, ptr: int, nbytes: int, width: int, value: int) -> None:
        """Fill `nbytes` at `ptr` with a `width`-byte pattern (guards, poison)."""
        name, np_type = _FILL[width]
        n = nbytes // width
        self.gpu.launch(self.h(name), self.gpu.grid_for(n), (256, 1, 1), 0, ptr, np.uint64(n),
                        np_type(value))

    # --- one run's setup --------------------------------------------------------------------
    def prepare(self, seed: int) -> None:
        """Seeded inputs and inouts (snapshotted), poisoned outputs, fresh guards."""
        for index, arr in enumerate(self.arrays.values()):
            a = arr.arg
            self.fill(arr.mem.ptr, GUARD_BYTES, 1, GUARD_BYTE)
            self.fill(arr.tail_ptr, arr.tail_bytes, 1, GUARD_BYTE)
            if a.role == "output":
                self.fill(arr.ptr, arr.nbytes, a.itemsize, POISON[a.dtype])
                continue
            self._generate(arr, array_seed(seed, index))
            assert arr.pristine is not None
            self.gpu.copy(arr.pristine.ptr, arr.ptr, arr.nbytes)

    def _generate(self, arr: DeviceArray, seed: int) -> None:
        a = arr.arg
        dist, lo, hi = a.init or (("normal", 0.0, 1.0) if a.dtype.startswith(("fp", "bf"))
                                  else ("randint", 0, 100))
        kernel = self.h(f"fill_{dist}_{a.dtype}")
        if dist == "randint":
            bounds: tuple[Any, Any] = (np.int64(lo), np.int64(max(hi, lo + 1)))
        else:
            bounds = (np.float32(lo), np.float32(hi))
        self.gpu.launch(kernel, self.gpu.grid_for(a.numel), (256, 1, 1), 0, arr.ptr,
                        np.uint64(a.numel), np.uint64(seed & 0xFFFFFFFFFFFFFFFF), *bounds)

    def restore_inouts(self) -> None:
        """Put inout arrays back to their initial values (before each timed repetition)."""
        for arr in self.arrays.values():
            if arr.arg.role == "inout" and arr.pristine is not None:
                self.gpu.copy(arr.ptr, arr.pristine.ptr, arr.nbytes)

    def kernel_args(self, overrides: dict[str, int] | None = None) -> list[Any]:
        """Kernel arguments in order: device pointers for arrays, typed values for scalars."""
        out: list[Any] = []
        for a in self.args:
            if a.role == "scalar":
                out.append(scalar_value(a))
            else:
                out.append((overrides or {}).get(a.name, self.arrays[a.name].ptr))
        return out

    def download(self, name: str) -> np.ndarray:
        """An array's current contents as its storage dtype, in its shape."""
        arr = self.arrays[name]
        storage = dtypes.lookup(arr.arg.dtype).numpy_storage  # type: ignore[union-attr]
        return self.gpu.download(arr.ptr, arr.nbytes, storage).reshape(arr.arg.shape)
