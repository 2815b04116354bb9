"""The spec of a `scale` kernel (x in, y out, n elements) that tests write beside a source of
their own: one text, its sections given as arguments."""

from __future__ import annotations

LAUNCH = '[launch]\ngrid = ["ceil_div(n, 256)"]\nblock = ["256"]'


def scale_spec(source: str, *, dtype: str = "fp32", kernel: str = "", params: str = "",
               launch: str = LAUNCH, shapes: tuple[tuple[str, int], ...] = (("s", 1000),),
               tail: str = "") -> str:
    """The TOML: [kernel] (its `source` and `kernel` lines), [params] when given, `launch`
    ("" for a C function), the three arguments in `dtype`, the `shapes` (name, n), `tail`."""
    head = f'[kernel]\nname = "scale"\nsource = "{source}"\n{kernel}\n'
    if params:
        head += f"[params]\n{params}\n"
    args = "".join(f'[[args]]\nname = "{name}"\ndtype = "{dtype}"\nshape = ["n"]\n'
                   f'role = "{role}"\n' for name, role in (("x", "input"), ("y", "output")))
    args += '[[args]]\nname = "n"\ndtype = "int32"\nrole = "scalar"\nvalue = "n"\n'
    rows = "".join(f'[[shapes]]\nname = "{name}"\nn = {n}\n' for name, n in shapes)
    return f"{head}{launch}\n{args}{rows}{tail}\n"
