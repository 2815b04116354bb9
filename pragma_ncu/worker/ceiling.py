"""The device's copy-bandwidth ceiling: the best of several ways to copy a large buffer."""

from __future__ import annotations

from typing import Any

import numpy as np

from pragma_ncu.worker.gpu import Gpu

REPS = 10


def measure(gpu: Gpu, harness: str, nbytes: int) -> dict[str, Any]:
    """GB/s counting bytes read plus bytes written, per method, and the best of them."""
    nbytes = int(min(nbytes, gpu.memory_free() // 4)) // 4096 * 4096
    src, dst = gpu.alloc(nbytes), gpu.alloc(nbytes)
    try:
        gpu.launch(gpu.kernel(harness, "fill_u32"), gpu.grid_for(nbytes // 4), (256, 1, 1), 0,
                   src.ptr, np.uint64(nbytes // 4), np.uint32(0x3C003C00))
        methods = {"driver memcpy": _best(gpu, lambda: gpu.copy(dst.ptr, src.ptr, nbytes))}
        kernel = gpu.kernel(harness, "copy_vec16")
        n16 = nbytes // 16
        for label, grid in (("16B copy, 4 blocks/SM", gpu.sm_count * 4),
                            ("16B copy, 16 blocks/SM", gpu.sm_count * 16),
                            ("16B copy, 1 element/thread", -(-n16 // 256))):
            methods[label] = _best(gpu, lambda g=grid: gpu.launch(
                kernel, (g, 1, 1), (256, 1, 1), 0, src.ptr, dst.ptr, np.uint64(n16)))
        gbps = {k: 2 * nbytes / (us * 1e3) for k, us in methods.items()}
        best = max(gbps, key=lambda k: gbps[k])
        return {"gbps": gbps[best], "method": best, "methods": gbps, "bytes": nbytes}
    finally:
        gpu.sync()
        gpu.free(src)
        gpu.free(dst)


def _best(gpu: Gpu, work: Any) -> float:
    work()
    gpu.sync()
    return float(np.median([gpu.time_ms(work) * 1e3 for _ in range(REPS)]))
