"""The task spec: a kernel, its arguments, launch geometry, problem shapes, tolerance, reference.

Pure data. `load_spec` (in `spec.file`) builds a `TaskSpec` from TOML; `TaskSpec.resolve` turns it
into a `ResolvedTask` of plain numbers for one shape and one parameter setting, which is what the
worker receives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from pragma_ncu.infra.errors import ExpressionError, SpecError
from pragma_ncu.spec import dtypes, expr
from pragma_ncu.spec.dtypes import DType
from pragma_ncu.targets import BUILTIN_RULES
from pragma_ncu.targets.rules import SpecRules

ParamValue = int | float | bool | str


# The rules of targets registered from outside, by name (a built-in target of the same name is
# replaced); the built-in targets' come from `targets`.
_registered: dict[str, SpecRules] = {}


def register_rules(rules: SpecRules) -> None:
    """Make a target's sources known to the validator (a target of that name is replaced)."""
    _registered[rules.target] = rules


def unregister_rules(target: str) -> None:
    """Forget a registered target's rules (a built-in target's come back)."""
    _registered.pop(target, None)


def all_rules() -> tuple[SpecRules, ...]:
    """Every target's rules: the built-in ones (the default first), then the registered."""
    builtin = tuple(r for r in BUILTIN_RULES if r.target not in _registered)
    return (*builtin, *_registered.values())


def rules_of(source: Path) -> SpecRules:
    """The rules of the target that takes `source` (foo.cpp, foo.c.j2, ...), a registered
    target's before a built-in one's; the default target's for a suffix no target claims."""
    suffix = Path(source.name.removesuffix(".j2")).suffix.lower()
    every = all_rules()
    return next((r for r in reversed(every) if suffix in r.suffixes), every[0])


def target_of(source: Path) -> str:
    """The name of the target that builds and runs `source` (by its suffix)."""
    return rules_of(source).target


def source_suffixes() -> tuple[str, ...]:
    """Every source suffix a target takes."""
    return tuple(s for r in all_rules() for s in r.suffixes)


class Role(StrEnum):
    INPUT = "input"
    OUTPUT = "output"
    INOUT = "inout"
    SCALAR = "scalar"


@dataclass(frozen=True)
class Init:
    """How an input is drawn: normal(a=mean, b=std), uniform(a=low, b=high) or
    randint(a=low, b=high)."""

    dist: str
    a: str | float
    b: str | float


@dataclass(frozen=True)
class ArgSpec:
    name: str
    dtype: DType
    role: Role
    shape: tuple[str, ...] = ()
    value: str | float | None = None
    init: Init | None = None


@dataclass(frozen=True)
class Param:
    """A tunable parameter: `-DNAME=value`, a jinja2 variable, a name in expressions, and, with
    `flag`, an nvcc flag ("--use_fast_math" when a bool is true, or "-maxrregcount={}" with the
    value formatted in; a false, zero or empty value adds nothing)."""

    name: str
    default: ParamValue
    values: tuple[ParamValue, ...] = ()
    flag: str | None = None

    def flags_for(self, value: ParamValue) -> tuple[str, ...]:
        if self.flag is None or value is False or value == 0 or value == "":
            return ()
        text = self.flag if isinstance(value, bool) else self.flag.replace("{}", str(value))
        return tuple(text.split())


@dataclass(frozen=True)
class LaunchSpec:
    grid: tuple[str, ...]
    block: tuple[str, ...]
    shared_mem: str = "0"


@dataclass(frozen=True)
class Shape:
    name: str
    dims: tuple[tuple[str, int], ...]

    def as_dict(self) -> dict[str, int]:
        return dict(self.dims)

    def label(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.dims)


@dataclass(frozen=True)
class Tolerance:
    per_dtype: tuple[tuple[str, float, float], ...] = ()
    max_bad_fraction: float = 0.0

    def for_dtype(self, dtype: DType) -> tuple[float, float]:
        for name, atol, rtol in self.per_dtype:
            if name == dtype.name:
                return atol, rtol
        return dtype.atol, dtype.rtol


REFERENCE_LIBRARIES = ("numpy", "torch", "cupy")


@dataclass(frozen=True)
class Reference:
    """A reference function `file.py:func` / `module:func` written with `library` (NumPy
    arrays on the host, torch tensors or CuPy arrays on the GPU), or None: the original kernel
    itself."""

    function: str | None = None
    base_dir: Path | None = None
    library: str = "numpy"


@dataclass(frozen=True)
class TaskSpec:
    kernel_name: str
    source_path: Path
    spec_path: Path
    launch: LaunchSpec
    args: tuple[ArgSpec, ...]
    shapes: tuple[Shape, ...]
    flags: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    tolerance: Tolerance = field(default_factory=Tolerance)
    reference: Reference = field(default_factory=Reference)
    bytes_expr: str | None = None
    flops_expr: str | None = None
    compute: str = "fp32"  # which compute ceiling the flops run on (roofline.COMPUTE_KINDS)
    template_args: tuple[str, ...] = ()  # C++ template parameters of the kernel, in order
    restrictions: tuple[str, ...] = ()  # expressions over params and dims that must hold

    @property
    def is_jinja(self) -> bool:
        return self.source_path.suffix == ".j2"

    @property
    def target(self) -> str:
        """The target that builds and runs the kernel: 'cuda', 'cpu' (a C/C++ function built
        with the system compiler), or a registered one."""
        return target_of(self.source_path)

    def compile_flags(self, params: dict[str, ParamValue]) -> tuple[str, ...]:
        """The spec's nvcc flags plus those of flag parameters at `params` (defaults elsewhere)."""
        values = {**self.default_params(), **params}
        extra = [f for p in self.params for f in p.flags_for(values[p.name])]
        return (*self.flags, *extra)

    def default_params(self) -> dict[str, ParamValue]:
        return {p.name: p.default for p in self.params}

    def shape_named(self, name: str) -> Shape:
        for shape in self.shapes:
            if shape.name == name:
                return shape
        known = ", ".join(s.name for s in self.shapes)
        raise SpecError(str(self.spec_path), "shapes", f"a shape name among: {known}", name)

    def resolve(self, shape: Shape, params: dict[str, ParamValue] | None = None) -> ResolvedTask:
        """Concrete sizes, launch geometry and scalar values for one shape and parameter set."""
        values = {**self.default_params(), **(params or {})}
        env = {**{k: v for k, v in values.items() if not isinstance(v, str)}, **shape.as_dict()}
        where = f"{self.spec_path} (shape {shape.name})"
        try:
            args = tuple(_resolve_arg(a, env) for a in self.args)
            launch = ResolvedLaunch(
                grid=_dims3(self.launch.grid, env, "launch.grid"),
                block=_dims3(self.launch.block, env, "launch.block"),
                shared_mem=expr.evaluate_int(self.launch.shared_mem, env, "launch.shared_mem"),
            )
            nbytes = (expr.evaluate_int(self.bytes_expr, env, "metrics.bytes")
                      if self.bytes_expr else sum(a.bytes_moved for a in args))
            flops = float(expr.evaluate(self.flops_expr, env)) if self.flops_expr else None
        except ExpressionError as exc:
            raise SpecError(where, "expression", "a valid expression", str(exc)) from None
        for i, a in enumerate(args):
            if a.role != Role.SCALAR.value and (not a.shape or min(a.shape) <= 0):
                raise SpecError(where, f"args[{i}].shape", "positive sizes", a.shape)
        if min(launch.grid + launch.block) <= 0 or launch.shared_mem < 0:
            raise SpecError(where, "launch", "positive grid and block sizes and shared_mem >= 0",
                            (launch.grid, launch.block, launch.shared_mem))
        return ResolvedTask(self.kernel_name, shape.name, shape.as_dict(), dict(values),
                            launch, args, int(nbytes), flops)


MEMORY_LIMIT_BYTES = 2**40  # 1 TiB: more than any one GPU (H200 141 GB) or most hosts have


@dataclass(frozen=True)
class Memory:
    """What the arrays of one instance may take: `limit` bytes of `what`'s memory, and what a
    worker adds to them: `guard_bytes` before and after each array, a copy of each input that
    it compares after the run (`copies_inputs`). The footprint is a lower bound of what a
    worker allocates (the reference's own arrays come on top)."""

    limit: int
    what: str
    guard_bytes: int = 0
    copies_inputs: bool = False

    def footprint(self, task: ResolvedTask) -> int:
        return sum(a.nbytes + 2 * self.guard_bytes
                   + (a.nbytes if self.copies_inputs and a.role in ("input", "inout") else 0)
                   for a in task.args if a.role != Role.SCALAR.value)

    def exceeded(self, task: ResolvedTask) -> tuple[str, str] | None:
        """(what was allowed, what the arrays take) when they do not fit, else None."""
        used = self.footprint(task)
        if used <= self.limit:
            return None
        big = max((a for a in task.args if a.role != Role.SCALAR.value), key=lambda a: a.nbytes)
        return (f"arrays within {_size(self.limit)} ({self.what})",
                f"{_size(used)}, args.{big.name} alone {_size(big.nbytes)}")


def _size(nbytes: int) -> str:
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    power = min(len(units) - 1, max(0, (nbytes.bit_length() - 1) // 10))
    return f"{nbytes / 1024**power:.1f} {units[power]}"


DIM_EXPECTED = "a positive integer below 2**63"


def is_dim(value: object) -> bool:
    """Whether a shape's dim is one: a positive integer that a 64-bit size holds."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63


# Where no device is known yet (a spec read, a shape given on the command line).
WITHOUT_DEVICE = Memory(MEMORY_LIMIT_BYTES, "the limit where no device is known yet: "
                        "spec.MEMORY_LIMIT_BYTES")


@dataclass(frozen=True)
class ResolvedArg:
    name: str
    dtype: str
    role: str
    shape: tuple[int, ...]
    itemsize: int
    value: float | int | None = None
    init: tuple[str, float, float] | None = None

    @property
    def numel(self) -> int:
        return math.prod(self.shape) if self.shape else 0

    @property
    def nbytes(self) -> int:
        return self.numel * self.itemsize

    @property
    def bytes_moved(self) -> int:
        return {"input": 1, "output": 1, "inout": 2}.get(self.role, 0) * self.nbytes

    def out_of_range(self) -> str | None:
        """What an integer scalar's value must be, when it is not (its type cannot hold it)."""
        dtype = dtypes.lookup(self.dtype)
        span = dtype.int_range if dtype is not None else None
        if span is None or self.value is None or span[0] <= self.value <= span[1]:
            return None
        return f"a value that {self.dtype} holds ({span[0]} to {span[1]})"


@dataclass(frozen=True)
class ResolvedLaunch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int

    @property
    def threads_per_block(self) -> int:
        return math.prod(self.block)


@dataclass(frozen=True)
class ResolvedTask:
    """Everything about one kernel at one shape, as plain numbers: what the worker receives."""

    kernel_name: str
    shape_name: str
    dims: dict[str, int]
    params: dict[str, ParamValue]
    launch: ResolvedLaunch
    args: tuple[ResolvedArg, ...]
    bytes_moved: int
    flops: float | None


def _resolve_arg(a: ArgSpec, env: dict[str, float | int | bool]) -> ResolvedArg:
    if a.role == Role.SCALAR:
        value = expr.evaluate(a.value if a.value is not None else 0, env)
        if not a.dtype.is_float:
            value = expr.evaluate_int(value, env, f"args.{a.name}.value")
        return ResolvedArg(a.name, a.dtype.name, a.role.value, (), a.dtype.itemsize, value=value)
    shape = tuple(expr.evaluate_int(s, env, f"args.{a.name}.shape") for s in a.shape)
    init = None
    if a.init is not None:
        init = (a.init.dist, float(expr.evaluate(a.init.a, env)),
                float(expr.evaluate(a.init.b, env)))
    return ResolvedArg(a.name, a.dtype.name, a.role.value, shape, a.dtype.itemsize, init=init)


def _dims3(exprs: tuple[str, ...], env: dict[str, float | int | bool],
           what: str) -> tuple[int, int, int]:
    values = [expr.evaluate_int(e, env, what) for e in exprs] + [1, 1]
    return (values[0], values[1], values[2])
