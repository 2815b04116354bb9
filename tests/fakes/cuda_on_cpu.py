"""CUDA kernels without barriers or warp operations, run on the CPU one thread after another:
enough to check that a rewrite of an element-wise kernel computes what the source computes, at
any length and with misaligned pointers, where CI has no GPU.

The kernel's text is compiled by the system's C++ compiler with a prelude that defines the
built-in indices as globals the driver sets before each thread runs, and CUDA's qualifiers as
nothing. A kernel whose threads wait on one another (`__syncthreads`, shuffles) cannot run this
way: `run` refuses it.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

PRELUDE = r"""
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <algorithm>
using std::min; using std::max;
struct pncu_uint3 { unsigned x, y, z; };
static pncu_uint3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
"""
DRIVER = r"""
extern "C" void pncu_launch(unsigned grid, unsigned block, void** args) {
    gridDim = {grid, 1, 1}; blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; ++b)
        for (unsigned t = 0; t < block; ++t) {
            blockIdx = {b, 0, 0}; threadIdx = {t, 0, 0};
            KERNEL_CALL;
        }
}
"""
WAITING = ("__syncthreads", "__shfl", "__syncwarp", "__ballot", "__shared__")


def compiler() -> str | None:
    return shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


def build(source: str, kernel: str, signature: list[str], out: Path, name: str) -> Any:
    """A shared object (`out/name.so`) running `kernel` (its C parameter types in `signature`)
    as a grid."""
    if any(w in source for w in WAITING):
        raise ValueError("the kernel's threads wait on one another: it cannot run on the CPU")
    cast = ", ".join(f"*({t}*)args[{k}]" for k, t in enumerate(signature))
    text = PRELUDE + source + DRIVER.replace("KERNEL_CALL", f"{kernel}({cast})")
    src, lib = out / f"{name}.cpp", out / f"{name}.so"
    src.write_text(text.replace("#pragma unroll", "").replace('extern "C" __global__',
                                                               'extern "C"'))
    cxx = compiler()
    assert cxx is not None
    subprocess.run([cxx, "-O1", "-shared", "-fPIC", "-w", "-o", str(lib), str(src)],
                   check=True, capture_output=True, text=True)
    so = ctypes.CDLL(str(lib))
    so.pncu_launch.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]
    return so


def run(so: Any, grid: int, block: int, args: list[Any]) -> None:
    """Launch with `args`: numpy arrays (passed by their data pointer, which may be offset
    into a larger buffer to misalign it) and ctypes scalars."""
    holders: list[Any] = []
    for a in args:
        holders.append(ctypes.c_void_p(a.ctypes.data) if isinstance(a, np.ndarray) else a)
    pointers = (ctypes.c_void_p * len(holders))(
        *[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
    so.pncu_launch(grid, block, pointers)
