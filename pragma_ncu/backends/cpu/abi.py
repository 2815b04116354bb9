"""How spec dtypes cross into C: the C type of an element or scalar, and its ctypes twin.

Shared by the CPU worker (ctypes calls) and the profiling driver (generated C), so both pass
arguments the way the kernel's own prototype declares them. Half-precision types have no
portable C scalar and are not offered on the CPU.
"""

from __future__ import annotations

import ctypes

from pragma_ncu.spec import dtypes

C_TYPES: dict[str, str] = dtypes.c_types()
_CTYPES: dict[str, type] = {
    "fp32": ctypes.c_float, "fp64": ctypes.c_double, "int8": ctypes.c_int8,
    "uint8": ctypes.c_uint8, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32,
    "int64": ctypes.c_int64, "uint64": ctypes.c_uint64,
}


def supported(dtype: str) -> bool:
    return dtype in C_TYPES


def c_type(dtype: str) -> str:
    """'fp32' -> 'float'; KeyError names the types a CPU kernel may use."""
    if dtype not in C_TYPES:
        raise KeyError(f"{dtype} has no C type on the CPU; use one of {', '.join(C_TYPES)}")
    return C_TYPES[dtype]


def ctypes_scalar(dtype: str) -> type:
    """The ctypes type a scalar argument of `dtype` is passed as."""
    c_type(dtype)
    return _CTYPES[dtype]
