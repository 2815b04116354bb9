"""Reference functions: loading them, calling them, reading what they returned. Shared by the GPU
and CPU workers.

A reference is written with one library (the spec's `reference.library`): NumPy (the default,
on the host), torch or CuPy. The rules are the same for all three: inputs and inouts arrive by
name in higher precision than the kernel's (fp16 and bf16 as float32, integers as int64, fp32
as float32, fp64 as float64), copies the reference may change freely, shaped as the spec says;
scalars by name; the outputs come back as one array, a tuple in argument order or a dict by
name, each flattened and converted to its output's reference dtype, and must have the output's
element count. Here: the host side (NumPy, and torch on CPU tensors for a C/C++ kernel); the
GPU side (torch and CuPy on device memory) is `worker.device_reference`.

`check_reference` holds a spec's reference to these rules before anything is built or run (in
the command's own process, at the smallest shape): a reference that cannot answer is the
spec's mistake, not the kernel's.

This module imports neither CUDA nor the GPU worker, so the CPU worker can use it as it is.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, TypeVar

import numpy as np

from pragma_ncu.infra.errors import ReferenceCheckError
from pragma_ncu.spec import dtypes
from pragma_ncu.spec.model import ResolvedArg, Shape, TaskSpec
from pragma_ncu.worker.inputs import drawn
from pragma_ncu.worker.protocol import EvalRequest

V = TypeVar("V")
FUNCTION_KINDS = ("numpy", "torch", "cupy")  # reference kinds that are a Python function
_PIP = {"torch": "torch", "cupy": "cupy-cuda12x or cupy-cuda13x"}
_CUPY_ON_CPU = ("a CuPy reference runs on the GPU, and this worker runs a C/C++ kernel on the "
                "CPU: write it with NumPy (library = \"numpy\") or torch (it gets CPU tensors)")


class ReferenceFailure(Exception):
    """The reference could not be computed (import failure, exception, wrong output shape)."""


class ReferenceCache(Generic[V]):
    """Reference outputs by `reference_key`, least recently used first out once they take more
    than `budget_bytes` (the newest entry always stays). `size` tells an entry's bytes and
    `release` frees one that goes (device memory on the GPU; nothing for host arrays)."""

    def __init__(self, budget_bytes: int, size: Callable[[V], int],
                 release: Callable[[V], None] = lambda _: None) -> None:
        self.budget, self.size, self.release = budget_bytes, size, release
        self.entries: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        if key in self.entries:
            self.entries.move_to_end(key)
            return self.entries[key]
        return None

    def put(self, key: Hashable, value: V) -> None:
        self.entries[key] = value
        while len(self.entries) > 1 and sum(map(self.size, self.entries.values())) > self.budget:
            _, old = self.entries.popitem(last=False)
            self.release(old)

    def computed(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The cached value of `key`, or `compute()` cached now."""
        found = self.get(key)
        if found is None:
            found = compute()
            self.put(key, found)
        return found


def reference_key(req: EvalRequest, seed: int) -> Hashable:
    """What a reference output depends on: the reference itself (a function, or a kernel and
    its launch), the shape's dims, the seed and the arguments; ReferenceFailure for a request
    that names neither a function nor a kernel."""
    ref = req.reference
    if ref.kind in FUNCTION_KINDS and ref.function:
        identity: tuple[Any, ...] = (ref.kind, ref.function, ref.base_dir)
    elif ref.kind == "kernel" and ref.kernel is not None:
        identity = ("kernel", ref.kernel.cubin, ref.kernel.symbol, ref.kernel.launch)
    else:
        raise ReferenceFailure(f"reference kind {ref.kind!r} needs a function ("
                               f"{', '.join(FUNCTION_KINDS)}) or a kernel (kernel)")
    return (identity, tuple(sorted(req.task.dims.items())), seed,
            tuple((a.name, a.dtype, a.shape, a.init, a.value) for a in req.task.args))


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


def load_reference(kind: str, function: str, base_dir: str | None, on_gpu: bool = True
                   ) -> Callable[..., Any]:
    """The reference function of kind numpy, torch or cupy. The library is imported first, so
    that a missing torch is reported as such, not as the reference module's ImportError."""
    if kind == "cupy" and not on_gpu:
        raise ReferenceFailure(_CUPY_ON_CPU)
    if kind != "numpy":
        import_library(kind)
    return load_function(function, base_dir)


def import_library(name: str) -> ModuleType:
    """torch or cupy, or a ReferenceFailure that says what to install and what works without."""
    try:
        return importlib.import_module(name)
    except Exception as exc:  # ImportError, or a broken install failing on import
        raise ReferenceFailure(
            f"reference.library = {name!r}, but {name} cannot be imported by the worker "
            f"({sys.executable}: {exc!r}): install it there (pip install {_PIP[name]}), or "
            "write the reference with NumPy (library = \"numpy\", the default, on the host), "
            "or drop [reference] to check against the original kernel") from None


def call_reference(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    try:
        return fn(**kwargs)
    except Exception as exc:
        raise ReferenceFailure(f"the reference raised {exc!r}") from None


def outputs_by_name(result: Any, names: list[str]) -> dict[str, Any]:
    """A reference's return value (dict, tuple/list in argument order, or one array) by name."""
    by_name = _by_name(result, names)
    empty = [n for n in names if by_name[n] is None]
    if empty:
        raise ReferenceFailure(f"the reference returned None for {', '.join(empty)}: return "
                               "the output's values (one array, or a dict or tuple of them)")
    return by_name


def _by_name(result: Any, names: list[str]) -> dict[str, Any]:
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


def outputs(args: tuple[ResolvedArg, ...]) -> list[ResolvedArg]:
    return [a for a in args if a.role in ("output", "inout")]


def check_size(arg: ResolvedArg, size: int) -> None:
    if size != arg.numel:
        raise ReferenceFailure(f"reference output {arg.name!r} has {size} elements, expected "
                               f"{arg.numel} (shape {arg.shape})")


def run_numpy_reference(fn: Callable[..., Any], args: tuple[ResolvedArg, ...],
                        read: Callable[[str], np.ndarray]) -> dict[str, np.ndarray]:
    """Call a NumPy reference on the current inputs (`read(name)` gives an array's stored
    values), in higher precision; its outputs flat, in each output's reference dtype."""
    return run_host_reference(fn, args, read, "numpy")


def run_host_reference(fn: Callable[..., Any], args: tuple[ResolvedArg, ...],
                       read: Callable[[str], np.ndarray], library: str = "numpy"
                       ) -> dict[str, np.ndarray]:
    """A NumPy reference, or a torch one on CPU tensors (the CPU worker's: CuPy needs a GPU);
    its outputs flat on the host, in each output's reference dtype."""
    if library == "cupy":
        raise ReferenceFailure(_CUPY_ON_CPU)
    wrap: Callable[[np.ndarray], Any] = lambda array: array  # noqa: E731
    if library == "torch":
        wrap = import_library("torch").from_numpy
    kwargs: dict[str, Any] = {}
    for a in args:
        if a.role == "scalar":
            kwargs[a.name] = a.value
        elif a.role in ("input", "inout"):
            kwargs[a.name] = wrap(dtypes.to_reference(_dtype(a.dtype), read(a.name)))
    by_name = outputs_by_name(call_reference(fn, kwargs), [a.name for a in outputs(args)])
    arrays: dict[str, np.ndarray] = {}
    for a in outputs(args):
        try:
            value = np.asarray(_to_host(by_name[a.name]))
            flat = np.ascontiguousarray(value.reshape(-1).astype(_dtype(a.dtype).reference_dtype))
        except (TypeError, ValueError, RuntimeError) as exc:
            raise ReferenceFailure(f"reference output {a.name!r} is not numeric: {exc}") from None
        check_size(a, flat.size)
        arrays[a.name] = flat
    return arrays


def _to_host(value: Any) -> Any:
    """A torch tensor (on any device, with or without grad) as a NumPy array; else as it is."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        tensor = value.detach().cpu()
        if "bfloat16" in str(getattr(tensor, "dtype", "")):  # NumPy has no bf16
            tensor = tensor.float()
        return tensor.numpy()
    return value


def _dtype(name: str) -> dtypes.DType:
    found = dtypes.lookup(name)
    assert found is not None, name
    return found


def check_reference(spec: TaskSpec, seed: int = 0) -> None:
    """ReferenceCheckError, naming the file and the function, when `spec`'s reference cannot
    serve: its file is missing or does not parse, it defines no such function, and (a NumPy
    reference, called here at the spec's smallest shape on the inputs a worker draws) it
    raises or returns what the spec's outputs are not (a missing output, another element
    count, values that are not numbers). A torch or CuPy reference runs where the worker puts
    it (on the GPU, with the worker's Python), so only its file is read here. What the
    reference prints goes to stderr, leaving a command's stdout to its results."""
    ref = spec.reference
    if not ref.function:
        return
    where, base = str(spec.spec_path), Path(ref.base_dir or spec.spec_path.parent)
    try:
        _check_file(ref.function, base)
        if ref.library != "numpy":
            return
        fn = load_function(ref.function, str(base))
    except ReferenceFailure as exc:
        raise ReferenceCheckError(where, ref.function, str(exc)) from None
    shape = _smallest(spec)
    task = spec.resolve(shape)
    inputs = drawn(task.args, seed)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            run_host_reference(fn, task.args, inputs.__getitem__)
    except ReferenceFailure as exc:
        raise ReferenceCheckError(where, ref.function, f"{exc} (called at shape {shape.name}: "
                                  f"{shape.label()})") from None


def _smallest(spec: TaskSpec) -> Shape:
    """The spec's shape whose arrays take the fewest bytes at the defaults."""
    return min(spec.shapes, key=lambda s: sum(a.nbytes for a in spec.resolve(s).args))


def _check_file(function: str, base: Path) -> None:
    """A 'file.py:func' reference's file exists, parses, and binds `func` at its top level
    (unless a star import could); a 'module:func' one is left to the import."""
    target, name = function.split(":")
    if not target.endswith(".py"):
        return
    path = base / target
    if not path.is_file():
        raise ReferenceFailure(f"no file {path.resolve()} (a path relative to the spec's "
                               "folder)")
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except SyntaxError as exc:
        raise ReferenceFailure(f"reference file {path}:{exc.lineno}: syntax error: "
                               f"{exc.msg}") from None
    except (OSError, ValueError) as exc:  # unreadable, or NUL bytes
        raise ReferenceFailure(f"reference file {path} cannot be read as Python: "
                               f"{exc}") from None
    bound = _top_level_names(tree)
    if name not in bound and "*" not in bound:
        functions = sorted(n.name for n in tree.body if isinstance(n, ast.FunctionDef))
        raise ReferenceFailure(f"reference file {path} defines no function {name} (its "
                               f"functions: {', '.join(functions) or 'none'})")


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level ("*" for a star import)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try, ast.With)):  # conditional definitions
            names.update(_top_level_names(ast.Module(body=list(_blocks(node)),
                                                     type_ignores=[])))
    return names


def _blocks(node: ast.AST) -> list[ast.stmt]:
    body: list[ast.stmt] = []
    for field in ("body", "orelse", "finalbody"):
        body += getattr(node, field, [])
    for handler in getattr(node, "handlers", []):
        body += handler.body
    return body
