"""The profiling driver: a standalone C program that calls one CPU kernel in a loop.

A profiler needs a process to watch. The driver declares the kernel's prototype from the spec's
argument dtypes (arrays as `T *`, scalars by value, in order), allocates every array 64-byte
aligned, fills inputs and inouts from a fixed xorshift sequence over the range each argument's
init describes (never all zeros), zeroes outputs, and calls the kernel `argv[1]` times. With
`0` it only fills, which is the baseline a counting profiler subtracts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import jinja2
import numpy as np

from pragma_ncu.backends.cpu.abi import c_type, supported
from pragma_ncu.infra.errors import SpecError
from pragma_ncu.infra.resources import data_path
from pragma_ncu.spec.model import ResolvedArg, ResolvedTask

TEMPLATE = "cpu_driver.c.j2"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DEFAULT_FLOAT = ("normal", 0.0, 1.0)  # as the spec and the GPU workspace default them
_DEFAULT_INT = ("randint", 0.0, 100.0)


@dataclass(frozen=True)
class DriverArg:
    """One argument as the template writes it (all text, ready to paste into C)."""

    var: str  # the C variable: a0, a1, ...
    label: str  # the spec's name and role, for a comment
    role: str
    ctype: str
    param: str  # the parameter in the prototype: "float *" or "int32_t"
    is_float: bool
    numel: int = 0
    nbytes: int = 0
    literal: str = ""  # a scalar's value
    lo: str = ""  # floats: lo + width * u; integers: lo + (next % span)
    width: str = ""
    span: int = 0


def driver_source(task: ResolvedTask, symbol: str) -> str:
    """The C source of a driver that calls `symbol` with `task`'s arguments."""
    where = f"{task.kernel_name} (shape {task.shape_name})"
    if not _IDENT.match(symbol):
        raise SpecError(where, "symbol", "a C identifier (the kernel's linker symbol)", symbol)
    args = tuple(_driver_arg(i, a, where) for i, a in enumerate(task.args))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(data_path("templates"))),
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    return env.get_template(TEMPLATE).render(symbol=symbol, shape=task.shape_name, args=args)


def fill_range(arg: ResolvedArg) -> tuple[float, float]:
    """The [low, high) an input is drawn from: normal(mean, std) -> mean ± 2 std,
    uniform(low, high) and randint(low, high) as given; widened so it is never a single zero."""
    is_float = arg.dtype.startswith("fp")
    dist, a, b = arg.init or (_DEFAULT_FLOAT if is_float else _DEFAULT_INT)
    lo, hi = (a - 2.0 * abs(b), a + 2.0 * abs(b)) if dist == "normal" else (a, b)
    if not is_float:
        limits = np.iinfo(np.dtype(arg.dtype))
        lo = float(min(max(math.floor(lo), int(limits.min)), int(limits.max)))
        hi = float(min(max(math.ceil(hi), lo + 1), int(limits.max) + 1))
        if lo == 0 and hi == 1:  # randint(0, 1) would be all zeros
            hi = 2.0
    elif not hi > lo:
        hi = lo + 1.0
    return lo, hi


def _driver_arg(index: int, a: ResolvedArg, where: str) -> DriverArg:
    if not supported(a.dtype):
        raise SpecError(where, f"args[{index}].dtype", "a dtype with a C type on the CPU "
                        "(fp32, fp64, int8, uint8, int32, uint32, int64, uint64)", a.dtype)
    ctype, is_float = c_type(a.dtype), a.dtype.startswith("fp")
    var, label = f"a{index}", f"{_comment(a.name)}: {a.role}"
    if a.role == "scalar":
        return DriverArg(var, label, a.role, ctype, ctype, is_float,
                         literal=_literal(a.value or 0, is_float, where, index))
    lo, width, span = "", "", 0
    if a.role != "output":
        low, high = fill_range(a)
        if not (math.isfinite(low) and math.isfinite(high)):
            raise SpecError(where, f"args[{index}].init", "finite bounds", a.init)
        if is_float:
            lo, width = repr(low), repr(high - low)
        else:
            lo, span = str(int(low)), int(high - low)
    return DriverArg(var, label, a.role, ctype, f"{ctype} *", is_float, numel=a.numel,
                     nbytes=a.nbytes, lo=lo, width=width, span=span)


def _literal(value: float | int, is_float: bool, where: str, index: int) -> str:
    if is_float:
        number = float(value)
        if not math.isfinite(number):
            raise SpecError(where, f"args[{index}].value", "a finite number", value)
        return repr(number)
    number = int(value)
    return f"{number}ull" if number > 2**63 - 1 else f"{number}ll"


def _comment(text: str) -> str:
    """A name safe inside a C comment."""
    return text.replace("*/", "* /")
