"""A stand-in for torch where torch is not installed (CI): just what pragma-ncu's reference
paths call, over NumPy arrays. "CUDA" memory is host memory here (see tests' FakeGpu), taken
through __cuda_array_interface__ without a copy, as torch takes device memory. Calls are
counted in `calls`, so tests can see that synchronization and cache release happened."""

from __future__ import annotations

import ctypes
from collections import Counter
from typing import Any

import numpy as np

calls: Counter[str] = Counter()

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bfloat16 = "torch.bfloat16"  # a marker: NumPy has no bf16


class Tensor(np.ndarray):
    """A NumPy array with the few torch.Tensor methods the reference paths use."""

    @property
    def is_bf16(self) -> bool:
        return bool(getattr(self, "_bf16", False))

    def detach(self) -> Tensor:
        return self

    def cpu(self) -> Tensor:
        return self

    def numpy(self) -> np.ndarray:
        if self.is_bf16:
            raise TypeError("Got unsupported ScalarType BFloat16")
        return np.asarray(self)

    def float(self) -> Tensor:
        return self.to(dtype=float32)

    def view(self, dtype: Any = None, *args: Any) -> Any:  # type: ignore[override]
        if dtype is bfloat16:
            bits = np.asarray(self).view(np.uint16)
            out = _tensor(bits)
            out._bf16 = True
            return out
        return super().view(dtype, *args) if dtype is not None else super().view()

    def to(self, dtype: Any = None, device: Any = None, copy: bool = False) -> Tensor:
        calls["to"] += 1
        if self.is_bf16:
            values = (np.asarray(self).astype(np.uint32) << 16).view(np.float32)
            return _tensor(values.astype(dtype or float32))
        if dtype is None or np.dtype(dtype) == self.dtype:
            return _tensor(np.array(self)) if copy else self
        return _tensor(np.asarray(self).astype(dtype))

    def contiguous(self) -> Tensor:
        return _tensor(np.ascontiguousarray(self))

    def data_ptr(self) -> int:
        return int(self.ctypes.data)

    def numel(self) -> int:
        return int(self.size)

    def element_size(self) -> int:
        return int(self.itemsize)


def _tensor(array: np.ndarray) -> Tensor:
    return np.asarray(array).view(Tensor)


def from_numpy(array: np.ndarray) -> Tensor:
    calls["from_numpy"] += 1
    return array.view(Tensor)


def as_tensor(obj: Any, device: Any = None) -> Tensor:
    calls["as_tensor"] += 1
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:  # device memory: a view, no copy
        ptr, _ = cai["data"]
        dtype = np.dtype(cai["typestr"])
        if dtype.kind == "u" and dtype.itemsize > 1:
            raise TypeError(f"as this fake pretends, unsigned typestr {cai['typestr']} unsupported")
        count = int(np.prod(cai["shape"]))
        buffer = (ctypes.c_uint8 * (count * dtype.itemsize)).from_address(ptr)
        return np.frombuffer(buffer, dtype=dtype).reshape(cai["shape"]).view(Tensor)
    if isinstance(obj, Tensor):
        return obj
    return _tensor(np.array(obj))


class cuda:  # noqa: N801 (torch.cuda)
    @staticmethod
    def synchronize() -> None:
        calls["synchronize"] += 1

    @staticmethod
    def empty_cache() -> None:
        calls["empty_cache"] += 1
