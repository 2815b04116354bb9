"""The CPU's compute ceiling: FP32 FMA operations per second over all its cores, measured by a
small C microbenchmark (peaks.c) built with -O3 -march=native and OpenMP where the compiler has
it, and cached per host beside the copy ceiling."""

from __future__ import annotations

import ctypes
import time
from importlib import resources
from pathlib import Path

from pragma_ncu.backends.cpu import build as cpu_build
from pragma_ncu.build.compile import BuildCache, BuildRequest
from pragma_ncu.infra.settings import Settings
from pragma_ncu.measure.ceilings import ComputeCeiling, cache_compute, cached_compute

ACC = 64  # accumulators per thread in peaks.c
FLAGS = ("-O3", "-march=native", "-fopenmp")
TARGET_S = 0.2


def measure(settings: Settings) -> dict[str, float]:
    """FP32 FLOP/s of peaks.c over all threads (2 FLOP per multiply-add)."""
    cc = cpu_build.find_compiler(settings, cxx=False)
    source = resources.files("pragma_ncu.backends.cpu").joinpath("peaks.c").read_text()
    cache = BuildCache(settings.cache_dir / "build-cpu")
    built = None
    for flags in (FLAGS, FLAGS[:2], FLAGS[:1]):  # without OpenMP or -march=native if refused
        built = cpu_build.build(BuildRequest(source, "peaks.c", "peak_fma", "host", flags),
                                cc, cache)
        if built.ok:
            break
    if built is None or not built.ok or built.cubin_path is None:
        raise RuntimeError(f"the CPU microbenchmark did not build: {built.log if built else ''}")
    lib = ctypes.CDLL(built.cubin_path)
    lib.peak_fma.argtypes, lib.peak_fma.restype = [ctypes.c_long, ctypes.c_float], ctypes.c_float
    threads = int(lib.peak_threads())
    iters, seconds = 1 << 14, 0.0
    for _ in range(12):  # grow until one call takes about TARGET_S
        seconds = _best(lib, iters)
        if seconds >= TARGET_S / 2:
            break
        iters *= 4
    return {"fp32_fma": 2 * ACC * iters * threads / seconds}


def _best(lib: ctypes.CDLL, iters: int) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        lib.peak_fma(iters, 1.0)
        times.append(time.perf_counter() - start)
    return min(times)


def compute_ceiling_for(settings: Settings, host_key: str, host_name: str,
                        refresh: bool = False) -> ComputeCeiling:
    """This host's compute ceiling from the cache, or measured now and cached."""
    cache_file: Path = settings.cache_dir / "compute_ceilings.json"
    known = None if refresh else cached_compute(cache_file, host_key)
    if known is not None:
        return known
    result = ComputeCeiling(per_second=measure(settings), vendor_tflops={}, device=host_name,
                            measured_at=time.strftime("%Y-%m-%d %H:%M:%S"))
    cache_compute(cache_file, host_key, result)
    return result
