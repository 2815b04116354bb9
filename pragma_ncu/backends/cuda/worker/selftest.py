"""`python -m pragma_ncu.backends.cuda.worker.selftest HARNESS.cubin`: one launch, for
`doctor` to profile."""

from __future__ import annotations

import sys

import numpy as np


def main(harness: str) -> int:
    from pragma_ncu.backends.cuda.worker.gpu import Gpu

    gpu = Gpu()
    mem = gpu.alloc(1 << 20)
    n = (1 << 20) // 4
    gpu.launch(gpu.kernel(harness, "fill_u32"), gpu.grid_for(n), (256, 1, 1), 0, mem.ptr,
               np.uint64(n), np.uint32(1))
    gpu.sync()
    gpu.free(mem)
    print("selftest ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
