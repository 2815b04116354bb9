"""What a kernel does, read from its name: the family (a GEMM, a reduction, a copy or cast, an
FFT, a softmax...) and the operations it names (sum, max...). Library kernels say it in their
names (cuBLAS's `sm80_xmma_gemm_*` and `nvjet_*`, cub's `DeviceReduceKernel<... plus ...>`,
PyTorch's `softmax_warp_forward`, CuPy's `cupy_sum`); a user's `stage_p` says nothing, and
None says so. Triage pairs the kernels a library swapped by it (pragma_ncu.triage.callsite);
the CUDA diagnosis reads it to know a GEMM, whose math tensor cores can do at lower
precision."""

from __future__ import annotations

import re

# What a kernel does, read from its name: (family, patterns on the lowercased name), first
# match wins. Copies come before element-wise kernels (PyTorch's casts are element-wise kernels
# of a copy functor), GEMMs before everything (an implicit-GEMM convolution is a GEMM here).
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gemm", (r"gemm", r"gemv", r"nvjet", r"matmul", r"\bmma\b", r"hgmma", r"wgmma")),
    ("fft", (r"fft", r"bluestein", r"r2c", r"c2r", r"c2c")),
    ("attention", (r"flash", r"fmha", r"attention", r"\battn")),
    ("softmax", (r"softmax",)),
    ("norm", (r"layer_?norm", r"rms_?norm", r"batch_?norm", r"group_?norm")),
    ("conv", (r"conv",)),
    ("sort", (r"sort", r"radix")),
    ("scan", (r"scan",)),
    ("random", (r"philox", r"curand", r"random", r"distribution")),
    ("copy", (r"copy", r"memcpy", r"\bcast\b", r"convert", r"transpose", r"contiguous")),
    ("fill", (r"fill", r"memset")),
    ("reduce", (r"reduc", r"(^|_|::|\b)(sum|max|min|mean|prod|argmax|argmin|norm)($|_|\b|<)")),
    ("elementwise", (r"elementwise", r"element_wise")),
)
_FAMILY_PATTERNS = tuple((name, tuple(re.compile(p) for p in patterns))
                         for name, patterns in FAMILIES)
# The operations a reduction or an element-wise kernel names, one spelling each.
OPERATIONS = {"sum": "sum", "plus": "sum", "add": "sum", "max": "max", "maximum": "max",
              "min": "min", "minimum": "min", "mean": "mean", "prod": "prod",
              "multiplies": "prod", "argmax": "argmax", "argmin": "argmin", "norm": "norm"}
# (not "std" nor "var": every C++ name has a std::, and variance kernels say so otherwise)
_WORD = re.compile(r"[a-z]+")


GEMM_LIKE = ("gemm", "conv")  # matrix-product math: what tensor cores do


def family(name: str) -> str | None:
    """What a kernel does by its name (a FAMILIES key), None when the name does not say."""
    lowered = name.lower()
    return next((fam for fam, patterns in _FAMILY_PATTERNS
                 if any(p.search(lowered) for p in patterns)), None)


def operations(name: str) -> frozenset[str]:
    """The operations a kernel's name mentions (OPERATIONS' spellings): {'sum'} for both
    `cupy_sum` and cub's reduction over `plus`."""
    return frozenset(OPERATIONS[w] for w in _WORD.findall(name.lower()) if w in OPERATIONS)
