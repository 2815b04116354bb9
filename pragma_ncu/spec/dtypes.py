"""Element types a spec may name, with what each needs for storage, checking and defaults."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    name: str
    itemsize: int
    storage: str  # numpy dtype used to hold the raw bits on the host
    is_float: bool
    atol: float  # default tolerance against a higher-precision reference
    rtol: float
    c_type: str | None = None  # its C type, where C has a portable one (not for fp16, bf16)

    @property
    def int_range(self) -> tuple[int, int] | None:
        """The values an integer type holds (None for a floating-point type)."""
        if self.is_float:
            return None
        bits = 8 * self.itemsize
        return (0, 2**bits - 1) if self.name.startswith("u") else (-(2**(bits - 1)),
                                                                   2**(bits - 1) - 1)

    @property
    def numpy_storage(self) -> np.dtype:
        return np.dtype(self.storage)

    @property
    def reference_dtype(self) -> np.dtype:
        """The dtype references are computed and compared in (higher precision than storage)."""
        if self.name == "fp64":
            return np.dtype("float64")
        if self.is_float:
            return np.dtype("float32")
        return np.dtype("int64")


_DTYPES = {
    d.name: d
    for d in (
        DType("fp16", 2, "float16", True, 1e-2, 1e-2),
        DType("bf16", 2, "uint16", True, 2e-2, 2e-2),
        DType("fp32", 4, "float32", True, 1e-5, 1e-4, "float"),
        DType("fp64", 8, "float64", True, 1e-10, 1e-9, "double"),
        DType("int8", 1, "int8", False, 0.0, 0.0, "int8_t"),
        DType("uint8", 1, "uint8", False, 0.0, 0.0, "uint8_t"),
        DType("int32", 4, "int32", False, 0.0, 0.0, "int32_t"),
        DType("uint32", 4, "uint32", False, 0.0, 0.0, "uint32_t"),
        DType("int64", 8, "int64", False, 0.0, 0.0, "int64_t"),
        DType("uint64", 8, "uint64", False, 0.0, 0.0, "uint64_t"),
    )
}

_ALIASES = {
    "half": "fp16", "float16": "fp16", "bfloat16": "bf16", "float": "fp32", "float32": "fp32",
    "double": "fp64", "float64": "fp64", "int": "int32", "long": "int64",
}


def dtype_names() -> list[str]:
    return list(_DTYPES)


def c_types() -> dict[str, str]:
    """The dtypes C has a portable type for, and that type: 'fp32' -> 'float', ..."""
    return {d.name: d.c_type for d in _DTYPES.values() if d.c_type}


def lookup(name: str) -> DType | None:
    """The dtype called `name` (or one of its aliases), or None."""
    key = name.strip().lower()
    return _DTYPES.get(_ALIASES.get(key, key))


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns (uint16) to float32 values."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 values to bf16 bit patterns, rounding to nearest even (NaN stays NaN)."""
    v = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounding = ((v >> 16) & 1) + np.uint32(0x7FFF)
    out = ((v + rounding) >> 16).astype(np.uint16)
    nan = np.isnan(values)
    out[nan] = 0x7FC0
    return out


def to_reference(dtype: DType, raw: np.ndarray) -> np.ndarray:
    """Raw storage array to the array a NumPy reference receives."""
    if dtype.name == "bf16":
        return bf16_to_f32(raw)
    return raw.astype(dtype.reference_dtype)
