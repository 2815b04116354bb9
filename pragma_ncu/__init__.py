"""pragma-ncu: a profiler-driven optimizer for CUDA kernels, built around Nsight Compute.

The library API is `pragma_ncu.api`. Its functions whose names are not also subpackages here
are reachable from the package too (`pragma_ncu.tune`, `pragma_ncu.autotune`, `bench`,
`explain`, `init`, ...; `profile`, `triage` and `ceilings` name packages, so those are
`pragma_ncu.api.profile` etc.), imported on first use so that `import pragma_ncu` stays cheap.

Every error the library raises on purpose is a `PragmaError`, of one of three kinds (each the
exit status of the command line, `ExitStatus`):

- `InputError` (2), something given cannot be used: `SpecError` (a spec), `ExpressionError`
  (an expression in a spec or an LLM reply), `TemplateError` (a kernel template), `DraftError`
  (`init`'s source), `ArgumentError` (an argument of the wrong type; a TypeError too),
  `ReportError` (a report, profile or CSV page), `TriageError` (sides that cannot be compared),
  `StoreError` (a run store or a run in it), `UsageError` (options that do not go together);
- `ToolchainError` (3), the environment: `NoGPUError`, nvcc, ncu and its counter permission,
  a C compiler or profiler, a pool of workers, the LLM (`LLMUnavailable`, `LLMBadReply`);
- `KernelFailure` (1), the kernel given does not compile or fails verification.
"""

from __future__ import annotations

import importlib
from typing import Any

from pragma_ncu.infra.errors import (
    ArgumentError,
    DraftError,
    ExitStatus,
    ExpressionError,
    InputError,
    KernelFailure,
    LLMBadReply,
    LLMUnavailable,
    NoGPUError,
    PragmaError,
    SpecError,
    TemplateError,
    ToolchainError,
)

__version__ = "0.1.0"

_API = ("tune", "autotune", "autotune_shapes", "bench", "explain", "init", "load")
# The error types defined beside the readers that raise them, imported on first use too.
_ERRORS = {"ReportError": "pragma_ncu.profile.read", "TriageError": "pragma_ncu.triage.report",
           "StoreError": "pragma_ncu.infra.store", "UsageError": "pragma_ncu.backends.base"}
__all__ = ["ArgumentError", "DraftError", "ExitStatus", "ExpressionError", "InputError",
           "KernelFailure", "LLMBadReply", "LLMUnavailable", "NoGPUError", "PragmaError",
           "SpecError", "TemplateError", "ToolchainError", *_ERRORS, *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from pragma_ncu import api

        return getattr(api, name)
    if name in _ERRORS:
        return getattr(importlib.import_module(_ERRORS[name]), name)
    raise AttributeError(f"module 'pragma_ncu' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, *_ERRORS})
