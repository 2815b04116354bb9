"""A task described in Python, for scripts and notebooks: the same `TaskSpec` as a TOML spec,
through the same validator (`spec.file.parse_spec`), without writing a file.

    from pragma_ncu.spec.describe import Arg, task_spec

    spec = task_spec(
        "examples/silu_and_mul.cu",
        args=[Arg.output("out", "fp16", ["T", "d"]),
              Arg.input("x", "fp16", ["T", "2 * d"]),
              Arg.scalar("d", "int32", "d")],
        shapes={"llama-7b": {"T": 4096, "d": 11008}, "odd": {"T": 37, "d": 1001}},
        launch={"grid": ["T"], "block": ["BLOCK"]},
        params={"BLOCK": {"default": 256, "values": [64, 128, 256, 512, 1024]}},
        tolerance={"fp16": (1e-2, 1e-2)},
        reference=silu_and_mul,          # a function, or "reference.py:silu_and_mul"
    )

Every keyword is the TOML section of the same name (docs/spec-format.md). The reference runs in
the worker, another process, which imports it: it must be a module-level function of an
importable module, or of the script being run (whose top level must then sit under
`if __name__ == "__main__":`, as for multiprocessing); a lambda, a closure or a function typed
into a notebook cell cannot be imported there, which is said at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pragma_ncu.infra.errors import SpecError
from pragma_ncu.spec.file import parse_spec, spec_path_for
from pragma_ncu.spec.model import TaskSpec

Expr = str | int | float


@dataclass(frozen=True)
class Arg:
    """One kernel argument, in the kernel's order: an [[args]] table of the TOML spec."""

    name: str
    dtype: str
    role: str
    shape: tuple[Expr, ...] = ()
    value: Expr | None = None
    init: Mapping[str, Any] | None = None

    @classmethod
    def input(cls, name: str, dtype: str, shape: Sequence[Expr],
              init: Mapping[str, Any] | None = None) -> Arg:
        return cls(name, dtype, "input", tuple(shape), init=init)

    @classmethod
    def output(cls, name: str, dtype: str, shape: Sequence[Expr]) -> Arg:
        return cls(name, dtype, "output", tuple(shape))

    @classmethod
    def inout(cls, name: str, dtype: str, shape: Sequence[Expr],
              init: Mapping[str, Any] | None = None) -> Arg:
        return cls(name, dtype, "inout", tuple(shape), init=init)

    @classmethod
    def scalar(cls, name: str, dtype: str, value: Expr) -> Arg:
        return cls(name, dtype, "scalar", value=value)

    def table(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "dtype": self.dtype, "role": self.role}
        if self.role == "scalar":
            out["value"] = self.value
        else:
            out["shape"] = list(self.shape)
        if self.init is not None:
            out["init"] = dict(self.init)
        return out


def task_spec(kernel: str | Path, *, args: Sequence[Arg | Mapping[str, Any]],
              shapes: Mapping[str, Mapping[str, int]] | Sequence[Mapping[str, Any]],
              launch: Mapping[str, Any] | None = None, name: str | None = None,
              params: Mapping[str, Any] | None = None, flags: Sequence[str] = (),
              template_args: Sequence[str] = (),
              tolerance: Mapping[str, tuple[float, float] | Mapping[str, float]] | None = None,
              max_bad_fraction: float = 0.0,
              reference: Callable[..., Any] | str | None = None,
              reference_library: str = "numpy", metrics: Mapping[str, Any] | None = None,
              restrictions: Sequence[str] = ()) -> TaskSpec:
    """The TaskSpec of `kernel` (a .cu, .cu.j2, .c or .cpp file) described by these objects;
    SpecError names a bad field as for a TOML spec. `name` defaults to the file's stem;
    `launch` is {"grid": [...], "block": [...], "shared_mem": "0"} (none for a CPU kernel);
    `shapes` maps a name to its dims, or lists dim tables; `tolerance` maps a dtype to
    (atol, rtol); `reference` is a function (see the module's notes) or 'file.py:function'
    relative to the kernel's folder, written with `reference_library` (numpy, torch, cupy)."""
    path = Path(kernel)
    spec_path = spec_path_for(path)
    where = f"task_spec({path})"
    stem = path.name.removesuffix(".j2").split(".")[0]
    data: dict[str, Any] = {
        "kernel": {"name": name or stem, "source": path.name, "flags": list(flags),
                   "template_args": list(template_args)},
        "params": dict(params or {}),
        "args": [a.table() if isinstance(a, Arg) else dict(a) for a in args],
        "shapes": _shapes(shapes),
        "tolerance": {**{k: _tolerance(v) for k, v in (tolerance or {}).items()},
                      "max_bad_fraction": max_bad_fraction},
    }
    if launch is not None:
        data["launch"] = dict(launch)
    if metrics:
        data["metrics"] = dict(metrics)
    if restrictions:
        data["tune"] = {"restrictions": list(restrictions)}
    target, folder = (None, None) if reference is None else _reference(reference, where)
    if target is not None:
        data["reference"] = {"function": target, "library": reference_library}
    spec = parse_spec(data, spec_path, path, where=where)
    if folder is not None:  # where the worker imports a function's module from
        spec = replace(spec, reference=replace(spec.reference, base_dir=folder))
    return spec


def _shapes(shapes: Mapping[str, Mapping[str, int]] | Sequence[Mapping[str, Any]]
            ) -> list[dict[str, Any]]:
    if isinstance(shapes, Mapping):
        return [{"name": shape_name, **dims} for shape_name, dims in shapes.items()]
    return [dict(s) for s in shapes]


def _tolerance(value: tuple[float, float] | Mapping[str, float]) -> dict[str, float]:
    if isinstance(value, Mapping):
        return dict(value)
    atol, rtol = value
    return {"atol": atol, "rtol": rtol}


def _reference(reference: Callable[..., Any] | str, where: str) -> tuple[str, Path | None]:
    """('file.py:func' or 'module:func', the folder to import it from; None: the kernel's)."""
    if isinstance(reference, str):
        return reference, None
    qualname = getattr(reference, "__qualname__", "")
    module = sys.modules.get(getattr(reference, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    if not qualname.isidentifier() or module is None or file is None or getattr(
            module, qualname, None) is not reference:
        raise SpecError(where, "reference", "a module-level function of a .py file (the worker, "
                        "another process, imports it; a lambda, a closure or a notebook cell's "
                        "function cannot be: put it in a module and import it from there)",
                        reference)
    source = Path(file).resolve()
    if module.__name__ == "__main__":  # the script being run: loaded by its path
        return f"{source.name}:{qualname}", source.parent
    root = source.parent
    for _ in range(module.__name__.count(".") + (source.name == "__init__.py")):
        root = root.parent
    return f"{module.__name__}:{qualname}", root
