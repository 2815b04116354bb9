"""The spec of a `scale`-like kernel (arrays of n elements, x in and y out unless others are
given, the scalar n) that tests write beside a source of their own: one text, its sections
given as arguments, and `write_spec` to put it in a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LAUNCH = '[launch]\ngrid = ["ceil_div(n, 256)"]\nblock = ["256"]'
ARRAYS = (("x", "input"), ("y", "output"))


def one_block(threads: int, source: str = "") -> str:
    """A [launch] of one block of `threads`; none for a C or C++ `source` (a CPU function)."""
    if source.endswith((".c", ".cpp")):
        return ""
    return f'[launch]\ngrid = ["1"]\nblock = ["{threads}"]'


def scale_spec(source: str | None = None, *, name: str = "scale", dtype: str = "fp32",
               kernel: str = "", params: str = "", launch: str = LAUNCH,
               arrays: tuple[tuple[str, str], ...] = ARRAYS, n_type: str = "int32",
               shapes: tuple[tuple[str | None, int | str], ...] = (("s", 1000),),
               tail: str = "") -> str:
    """The TOML: [kernel] `name`, its `source` (None: no line, the .cu named as the spec) and
    `kernel` lines, [params] when given, `launch` ("" for a C function), the `arrays` (name,
    role) of n elements in `dtype` and the scalar n in `n_type`, the `shapes` (name or None,
    n), `tail`."""
    head = f'[kernel]\nname = "{name}"\n'
    if source is not None:
        head += f'source = "{source}"\n'
    head += f"{kernel}\n"
    if params:
        head += f"[params]\n{params}\n"
    args = "".join(f'[[args]]\nname = "{array}"\ndtype = "{dtype}"\nshape = ["n"]\n'
                   f'role = "{role}"\n' for array, role in arrays)
    args += f'[[args]]\nname = "n"\ndtype = "{n_type}"\nrole = "scalar"\nvalue = "n"\n'
    rows = "".join("[[shapes]]\n" + (f'name = "{shape}"\n' if shape is not None else "")
                   + f"n = {n}\n" for shape, n in shapes)
    return f"{head}{launch}\n{args}{rows}{tail}\n"


def write_spec(folder: Path, source: str | None = None, *, file: str = "scale.toml",
               **sections: Any) -> Path:
    """`scale_spec(source, **sections)` written to `folder`/`file`; its path."""
    path = folder / file
    path.write_text(scale_spec(source, **sections))
    return path
