"""A stand-in for CuPy where it is not installed (CI): what pragma-ncu's device reference path
calls, over NumPy arrays whose "device" memory is host memory (tests' FakeGpu), taken through
__cuda_array_interface__ without a copy, as CuPy takes device memory."""

from __future__ import annotations

import ctypes
from collections import Counter
from types import SimpleNamespace
from typing import Any

import numpy as np

calls: Counter[str] = Counter()
uint32 = np.uint32
float32 = np.float32


class ndarray(np.ndarray):  # noqa: N801 (cupy.ndarray)
    @property
    def data(self) -> Any:  # type: ignore[override]
        return SimpleNamespace(ptr=int(self.ctypes.data))


def _array(values: np.ndarray) -> ndarray:
    return np.asarray(values).view(ndarray)


def asarray(obj: Any) -> ndarray:
    calls["asarray"] += 1
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        return obj if isinstance(obj, ndarray) else _array(np.array(obj))
    ptr, _ = cai["data"]
    dtype = np.dtype(cai["typestr"])
    count = int(np.prod(cai["shape"]))
    buffer = (ctypes.c_uint8 * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(buffer, dtype=dtype).reshape(cai["shape"]).view(ndarray)


def ascontiguousarray(a: Any) -> ndarray:
    return _array(np.ascontiguousarray(a))


class _Runtime:
    @staticmethod
    def deviceSynchronize() -> None:  # noqa: N802 (cupy.cuda.runtime)
        calls["deviceSynchronize"] += 1


cuda = SimpleNamespace(runtime=_Runtime())


class _Pool:
    @staticmethod
    def free_all_blocks() -> None:
        calls["free_all_blocks"] += 1


def get_default_memory_pool() -> _Pool:
    return _Pool()
