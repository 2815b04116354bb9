"""Host arrays for one CPU evaluation: guarded buffers, seeded inputs, poison, and the checks.

The NumPy twin of the CUDA side's workspace and checks: every array sits 64-byte aligned
between guard regions of GUARD_BYTE, outputs are poisoned with the same bit patterns before
each run,
inputs are snapshotted and compared byte for byte afterwards. No CUDA is imported here: the
patterns are the shared ones of `pragma_ncu.worker.guards`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pragma_ncu.measure.measurement import OutputCheck
from pragma_ncu.spec import dtypes
from pragma_ncu.spec.model import ResolvedArg
from pragma_ncu.worker.guards import GUARD_BYTE, GUARD_BYTES, POISON
from pragma_ncu.worker.inputs import array_seed, generate

ALIGN = 64  # a cache line, and enough for any vector load a kernel may assume
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

RefArrays = dict[str, np.ndarray]  # output name -> flat reference values
Counts = tuple[tuple[str, int], ...]  # (array name, bytes)


def lookup(dtype: str) -> dtypes.DType:
    """The spec dtype called `dtype`; KeyError names the known ones."""
    found = dtypes.lookup(dtype)
    if found is None:
        raise KeyError(f"unknown dtype {dtype!r}; known: {', '.join(dtypes.dtype_names())}")
    return found


def storage(dtype: str) -> np.dtype:
    """The NumPy dtype an array of spec dtype `dtype` is stored as."""
    return lookup(dtype).numpy_storage


def aligned_bytes(nbytes: int, offset: int = 0) -> tuple[np.ndarray, int]:
    """A uint8 buffer of `nbytes`, and where in it an ALIGN-aligned address follows `offset`."""
    buf = np.empty(nbytes + ALIGN, dtype=np.uint8)
    start = offset + (-(buf.ctypes.data + offset)) % ALIGN
    return buf, start


def poison(target: np.ndarray, dtype: str) -> None:
    """Fill a uint8 view with the dtype's poison bit pattern (a NaN payload for floats)."""
    width = storage(dtype).itemsize
    target.view(_UINT[width])[:] = POISON[dtype]


@dataclass
class HostArray:
    """One argument's array: guard + data + guard in `buf`, the data at `start`."""

    arg: ResolvedArg
    buf: np.ndarray  # uint8
    start: int
    pristine: np.ndarray | None  # uint8 snapshot of inputs/inouts before the run

    @property
    def data(self) -> np.ndarray:
        """The array's bytes (a view)."""
        return self.buf[self.start: self.start + self.arg.nbytes]

    @property
    def ptr(self) -> int:
        return int(self.buf.ctypes.data) + self.start

    def values(self) -> np.ndarray:
        """The data as its storage dtype, flat (a view)."""
        return self.data.view(storage(self.arg.dtype))

    def guard_bytes_changed(self) -> int:
        head = self.buf[: self.start]
        tail = self.buf[self.start + self.arg.nbytes:]
        return int(np.count_nonzero(head != GUARD_BYTE) + np.count_nonzero(tail != GUARD_BYTE))


class HostWorkspace:
    """The arrays of one task at one shape in host memory."""

    def __init__(self, args: tuple[ResolvedArg, ...]) -> None:
        self.args = args
        self.arrays: dict[str, HostArray] = {}
        for a in args:
            if a.role == "scalar":
                continue
            padded = -(-a.nbytes // 256) * 256  # as on the GPU: the tail guard covers padding
            buf, start = aligned_bytes(GUARD_BYTES + padded + GUARD_BYTES, GUARD_BYTES)
            snap = np.empty(a.nbytes, np.uint8) if a.role in ("input", "inout") else None
            self.arrays[a.name] = HostArray(a, buf, start, snap)

    def prepare(self, seed: int) -> None:
        """Seeded inputs and inouts (snapshotted), poisoned outputs, fresh guards."""
        for index, arr in enumerate(self.arrays.values()):
            arr.buf.fill(GUARD_BYTE)
            if arr.arg.role == "output":
                poison(arr.data, arr.arg.dtype)
                continue
            # The GPU worker's per-array seed, so both paths see independent streams per array.
            arr.values()[:] = generate(arr.arg, array_seed(seed, index))
            assert arr.pristine is not None
            np.copyto(arr.pristine, arr.data)

    def restore_inouts(self) -> None:
        """Put inout arrays back to their initial values (before each timed call)."""
        for arr in self.arrays.values():
            if arr.arg.role == "inout" and arr.pristine is not None:
                np.copyto(arr.data, arr.pristine)

    def call_args(self, overrides: dict[str, int] | None = None) -> list[Any]:
        """Arguments in order: addresses for arrays, plain values for scalars (ctypes converts
        them through the function's argtypes)."""
        out: list[Any] = []
        for a in self.args:
            if a.role == "scalar":  # ctypes refuses 3.0 for an int, so convert exactly
                value = a.value if a.value is not None else 0
                out.append(float(value) if lookup(a.dtype).is_float else int(value))
            else:
                out.append((overrides or {}).get(a.name, self.arrays[a.name].ptr))
        return out

    def read(self, name: str) -> np.ndarray:
        """An array's current contents as its storage dtype, in its shape (a copy)."""
        arr = self.arrays[name]
        return arr.values().reshape(arr.arg.shape).copy()


def run_checks(ws: HostWorkspace, refs: RefArrays, tolerances: dict[str, tuple[float, float]]
               ) -> tuple[tuple[OutputCheck, ...], Counts, Counts]:
    """Compare outputs with the reference, and check guards and inputs."""
    outputs = tuple(
        compare(a.name, ws.arrays[a.name].values(), refs[a.name], a.dtype,
                tolerances.get(a.name, (lookup(a.dtype).atol, lookup(a.dtype).rtol)))
        for a in ws.args if a.role in ("output", "inout"))
    guards = tuple((name, n) for name, arr in ws.arrays.items()
                   if (n := arr.guard_bytes_changed()))
    mutated = tuple((name, n) for name, arr in ws.arrays.items()
                    if arr.arg.role == "input" and arr.pristine is not None
                    and (n := int(np.count_nonzero(arr.data != arr.pristine))))
    return outputs, guards, mutated


def compare(name: str, out: np.ndarray, ref: np.ndarray, dtype: str,
            tolerance: tuple[float, float]) -> OutputCheck:
    """One output against its reference, with the GPU harness's rules (`compare` in harness.cu):
    NaN must meet NaN, infinities must match exactly, the rest is within atol + rtol * |ref|;
    an element still holding the poison pattern is unwritten (not judged for 1-byte types, where
    the pattern is an ordinary value)."""
    atol, rtol = tolerance
    width = out.dtype.itemsize
    if width >= 2:
        unwritten = out.view(_UINT[width]) == _UINT[width](POISON[dtype])
    else:
        unwritten = np.zeros(out.shape, dtype=bool)
    od = dtypes.to_reference(lookup(dtype), out).astype(np.float64)
    rd = ref.astype(np.float64)
    nan_o, nan_r = np.isnan(od), np.isnan(rd)
    special = nan_o | nan_r | np.isinf(od) | np.isinf(rd)
    with np.errstate(all="ignore"):
        err = np.abs(od - rd)
        within = err <= atol + rtol * np.abs(rd)
        ok = np.where(nan_o | nan_r, nan_o & nan_r, np.where(special, od == rd, within))
        ok &= ~unwritten
        finite = ~special
        rel_at = finite & (np.abs(rd) > atol) & (np.abs(rd) > 1e-30)
        max_rel = float((err[rel_at] / np.abs(rd[rel_at])).max(initial=0.0))
    bad_at = np.flatnonzero(~ok)
    first = int(bad_at[0]) if bad_at.size else None
    return OutputCheck(
        name=name, numel=int(out.size), bad=int(bad_at.size),
        unwritten=int(np.count_nonzero(unwritten)), nan_out=int(np.count_nonzero(nan_o)),
        max_abs=float(err[finite].max(initial=0.0)), max_rel=max_rel, first_bad=first,
        sample_out=None if first is None else float(od[first]),
        sample_ref=None if first is None else float(rd[first]),
    )
