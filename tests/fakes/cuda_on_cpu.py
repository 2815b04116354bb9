"""CUDA kernels run on the CPU, for the tests that check a rewrite computes what its source
computes (at odd lengths, with misaligned pointers, with barriers and warp shuffles) where CI
has no GPU.

The kernel's text is compiled by the system's C++ compiler with `cuda_emu/emu.h` included
first (the built-in indices as globals, CUDA's qualifiers as nothing, `__shared__` arrays as
statics, `__syncthreads` and the `__shfl_*_sync` as yields to a scheduler) and linked with
`cuda_emu/sched.cpp`, which runs a block's threads as fibers and completes a barrier only when
the whole block reaches the same one and a shuffle only when all 32 lanes of the warp do, with a
full mask; anything else fails the launch. Blocks run one after another.
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent / "cuda_emu"
def compiler() -> str | None:
    return shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")


Dims = int | tuple[int, ...]  # a launch's grid or block: one number, or up to three


@dataclass(frozen=True)
class Kernel:
    library: Any

    def launch(self, grid: Dims, block: Dims, args: list[Any]) -> None:
        """Run a grid of blocks with `args`: numpy arrays (passed by their data pointer, which
        may be offset into a larger buffer to misalign it) and ctypes scalars. The grid and
        the block are a number (one dimension) or up to three (x, y, z; the others 1)."""
        holders = [ctypes.c_void_p(a.ctypes.data) if isinstance(a, np.ndarray) else a
                   for a in args]
        pointers = (ctypes.c_void_p * len(holders))(
            *[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
        entry = ctypes.cast(self.library.emu_entry, ctypes.c_void_p)
        status = self.library.emu_launch(entry, pointers, *dims3(grid), *dims3(block))
        if status != 0:
            raise RuntimeError(f"the emulator refused a block of {block} threads")


def dims3(dims: Dims) -> tuple[int, int, int]:
    """A launch dimension as (x, y, z): a number is x, missing ones are 1."""
    given = (dims,) if isinstance(dims, int) else tuple(dims)
    assert 1 <= len(given) <= 3 and all(d >= 1 for d in given), given
    return (*given, *(1,) * (3 - len(given)))  # type: ignore[return-value]


def build(source: str, kernel: str, out: Path, name: str) -> Kernel:
    """`kernel` of `source` compiled for the CPU into `out` (once for the same text)."""
    cxx = compiler()
    assert cxx is not None
    text = source + f'\nextern "C" void emu_entry(void** a) {{ emu_invoke(&{kernel}, a); }}\n'
    stem = f"{name}-{hashlib.sha1(text.encode()).hexdigest()[:12]}"
    src, lib, sched = out / f"{stem}.cpp", out / f"{stem}.so", out / "sched.o"
    if lib.exists():
        return _loaded(lib)
    src.write_text(text)
    if not sched.exists():
        subprocess.run([cxx, "-O1", "-std=c++17", "-fPIC", "-c", str(HERE / "sched.cpp"), "-o",
                        str(sched)], check=True, capture_output=True, text=True)
    subprocess.run([cxx, "-O1", "-std=c++17", "-shared", "-fPIC", "-w", f"-I{HERE / 'include'}",
                    "-include", str(HERE / "emu.h"), "-x", "c++", str(src), "-x", "none",
                    str(sched), "-o", str(lib)], check=True, capture_output=True, text=True)
    return _loaded(lib)


def _loaded(lib: Path) -> Kernel:
    library = ctypes.CDLL(str(lib))
    library.emu_launch.restype = ctypes.c_int
    return Kernel(library)


# --- a rewrite against its source, through a spec ---------------------------------------------

SCALARS = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint32": ctypes.c_uint32,
           "fp32": ctypes.c_float, "fp64": ctypes.c_double}


def equivalent(spec: Any, text: str, launch: dict[str, Any], point: dict[str, Any],
               dims: dict[str, int], out: Path, seed: int = 0,
               reference: bool = False) -> dict[str, float]:
    """Run the spec's kernel as written and `text` (a rewrite of it, launched as `launch`, a
    launch table of any dimensions, at the knobs' values `point`) on the same inputs at `dims`;
    assert that every output agrees within the spec's tolerance, and return each output's
    largest error over its tolerance. With `reference`, the source's outputs must agree with
    the spec's NumPy reference too."""
    from pragma_ncu.backends.cpu.worker.workspace import generate, storage
    from pragma_ncu.spec import expr
    from pragma_ncu.spec.model import Shape

    task = spec.resolve(Shape("emulated", tuple(dims.items())))
    env = {**dims, **point}
    rewrite = (tuple(expr.evaluate_int(g, env, "grid") for g in launch["grid"]),
               tuple(expr.evaluate_int(b, env, "block") for b in launch["block"]))
    inputs = {a.name: generate(a, seed + k).astype(storage(a.dtype))
              for k, a in enumerate(task.args) if a.role in ("input", "inout")}
    results = []
    for source, (grid, block), name in (
            (spec.source_path.read_text(), (task.launch.grid, task.launch.block), "plain"),
            (text, rewrite, "rewrite")):
        arrays = {a.name: inputs[a.name].copy() if a.name in inputs else
                  np.full(a.numel, np.nan).astype(storage(a.dtype))
                  for a in task.args if a.role != "scalar"}
        build(source, spec.kernel_name, out, name).launch(grid, block, [
            arrays[a.name] if a.role != "scalar" else SCALARS[a.dtype](a.value)
            for a in task.args])
        results.append(arrays)
    if reference:
        from pragma_ncu.worker.reference import load_function, run_numpy_reference

        fn = load_function(str(spec.reference.function), str(spec.spec_path.parent))
        want = run_numpy_reference(fn, task.args, inputs.__getitem__)
        _agree(spec, task, {k: v.astype(results[0][k].dtype) for k, v in want.items()},
               results[0], "the source against the reference")
    return _agree(spec, task, results[0], results[1], "the rewrite against the source")


def _agree(spec: Any, task: Any, wanted: dict[str, np.ndarray], gotten: dict[str, np.ndarray],
           what: str) -> dict[str, float]:
    """Assert that every output agrees within the spec's tolerance; each output's largest
    error over its tolerance."""
    from pragma_ncu.spec import dtypes

    errors = {}
    for a in (a for a in task.args if a.role in ("output", "inout")):
        atol, rtol = spec.tolerance.for_dtype(dtypes.lookup(a.dtype))
        want, got = wanted[a.name].astype(np.float64), gotten[a.name].astype(np.float64)
        assert not np.isnan(want).any(), f"{a.name}: {what}: unwritten elements"
        bad = ~(np.abs(got - want) <= atol + rtol * np.abs(want))
        first = int(np.argmax(bad))
        assert not bad.any(), (f"{a.name}: {what}: {int(bad.sum())} of {a.numel} differ, the "
                               f"first at {first}: {got[first]} against {want[first]}")
        room = atol + rtol * np.abs(want)
        errors[a.name] = float(np.max(np.divide(np.abs(got - want), room, where=room > 0,
                                                out=np.zeros_like(room)), initial=0.0))
    return errors
