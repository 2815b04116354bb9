"""Loading a NumPy reference and reading what it returned: shared by the GPU and CPU workers.

This module imports neither CUDA nor the GPU worker, so the CPU worker can use it as it is.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pragma_ncu import dtypes
from pragma_ncu.spec import ResolvedArg


class ReferenceFailure(Exception):
    """The reference could not be computed (import failure, exception, wrong output shape)."""


def load_function(function: str, base_dir: str | None) -> Callable[..., Any]:
    """Import 'file.py:func' (relative to base_dir) or 'module:func'."""
    target, name = function.split(":")
    try:
        if target.endswith(".py"):
            path = Path(base_dir or ".") / target
            spec = importlib.util.spec_from_file_location(f"_pragma_ref_{path.stem}", path)
            if spec is None or spec.loader is None:
                raise ReferenceFailure(f"cannot load reference file {path}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            if base_dir and base_dir not in sys.path:
                sys.path.insert(0, base_dir)
            module = importlib.import_module(target)
    except ReferenceFailure:
        raise
    except Exception as exc:
        raise ReferenceFailure(f"importing reference {function!r} failed: {exc!r}") from None
    if not hasattr(module, name):
        raise ReferenceFailure(f"reference module {target!r} has no function {name!r}")
    return getattr(module, name)


def outputs_by_name(result: Any, names: list[str]) -> dict[str, Any]:
    """A reference's return value (dict, tuple/list in argument order, or one array) by name."""
    if isinstance(result, dict):
        missing = [n for n in names if n not in result]
        if missing:
            raise ReferenceFailure(f"the reference returned no value for {missing}")
        return result
    if isinstance(result, (tuple, list)):
        if len(result) != len(names):
            raise ReferenceFailure(f"the reference returned {len(result)} arrays, expected "
                                   f"{len(names)} ({', '.join(names)})")
        return dict(zip(names, result, strict=True))
    if len(names) != 1:
        raise ReferenceFailure(f"the reference returned one array, expected a dict or tuple of "
                               f"{', '.join(names)}")
    return {names[0]: result}


def run_numpy_reference(fn: Callable[..., Any], args: tuple[ResolvedArg, ...],
                        read: Callable[[str], np.ndarray]) -> dict[str, np.ndarray]:
    """Call a NumPy reference on the current inputs (`read(name)` gives an array's stored
    values), in higher precision; its outputs flat, in each output's reference dtype."""
    kwargs: dict[str, Any] = {}
    for a in args:
        if a.role == "scalar":
            kwargs[a.name] = a.value
        elif a.role in ("input", "inout"):
            kwargs[a.name] = dtypes.to_reference(_dtype(a.dtype), read(a.name))
    try:
        result = fn(**kwargs)
    except Exception as exc:
        raise ReferenceFailure(f"the reference raised {exc!r}") from None
    outs = [a for a in args if a.role in ("output", "inout")]
    by_name = outputs_by_name(result, [a.name for a in outs])
    arrays: dict[str, np.ndarray] = {}
    for a in outs:
        try:
            value = np.asarray(by_name[a.name])
            flat = np.ascontiguousarray(value.reshape(-1).astype(_dtype(a.dtype).reference_dtype))
        except (TypeError, ValueError) as exc:
            raise ReferenceFailure(f"reference output {a.name!r} is not numeric: {exc}") from None
        if flat.size != a.numel:
            raise ReferenceFailure(f"reference output {a.name!r} has {flat.size} elements, "
                                   f"expected {a.numel} (shape {a.shape})")
        arrays[a.name] = flat
    return arrays


def _dtype(name: str) -> dtypes.DType:
    found = dtypes.lookup(name)
    assert found is not None, name
    return found
