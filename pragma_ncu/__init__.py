"""pragma-ncu: a profiler-driven optimizer for CUDA kernels, built around Nsight Compute.

The library API is `pragma_ncu.api`. Its functions whose names are not also subpackages here
are reachable from the package too (`pragma_ncu.tune`, `pragma_ncu.autotune`, `bench`,
`explain`, `init`, ...; `profile`, `triage` and `ceilings` name packages, so those are
`pragma_ncu.api.profile` etc.), imported on first use so that `import pragma_ncu` stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = ("tune", "autotune", "autotune_shapes", "bench", "explain", "init", "load")


def __getattr__(name: str) -> Any:
    if name in _API:
        from pragma_ncu import api

        return getattr(api, name)
    raise AttributeError(f"module 'pragma_ncu' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
