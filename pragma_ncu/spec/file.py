"""Reading a task spec from TOML, with messages that name the bad field and what was expected."""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pragma_ncu.infra.errors import ExpressionError, SpecError
from pragma_ncu.measure.roofline import COMPUTE_KINDS
from pragma_ncu.spec import dtypes, expr
from pragma_ncu.spec.model import (
    DIM_EXPECTED,
    REFERENCE_LIBRARIES,
    WITHOUT_DEVICE,
    ArgSpec,
    Init,
    LaunchSpec,
    Memory,
    Param,
    ParamValue,
    Reference,
    ResolvedTask,
    Role,
    Shape,
    TaskSpec,
    Tolerance,
    is_dim,
    rules_of,
)
from pragma_ncu.targets.rules import SpecRules

_TOP_LEVEL = {"kernel", "params", "launch", "args", "shapes", "tolerance", "reference", "metrics",
              "tune"}
_KEYS = {
    "kernel": {"name", "source", "flags", "template_args"}, "tune": {"restrictions"},
    "param": {"default", "values", "flag"}, "launch": {"grid", "block", "shared_mem"},
    "metrics": {"bytes", "flops", "compute"}, "reference": {"function", "library"},
    "arg": {"name", "dtype", "role", "shape", "value", "init"},
}
_DISTS = {"normal": ("mean", "std"), "uniform": ("low", "high"), "randint": ("low", "high")}
PLACEHOLDER = "<fill>"  # what `pragma-ncu init` writes where only the user knows the value
_PLACEHOLDER = re.compile(r"<fill\b[^>]*>")


def spec_path_for(kernel: Path) -> Path:
    """The spec beside a kernel: foo.cu -> foo.toml, foo.cu.j2 -> foo.toml."""
    return kernel.with_name(kernel.name.removesuffix(".j2")).with_suffix(".toml")


def load_spec(spec_path: Path, kernel_path: Path | None = None) -> TaskSpec:
    """Read and validate the spec at `spec_path`; `kernel_path` overrides its `kernel.source`."""
    where = str(spec_path)
    if not spec_path.is_file():
        raise SpecError(where, "(file)", "an existing TOML spec file (foo.toml beside foo.cu, "
                        "or --spec PATH)")
    try:
        data = tomllib.loads(spec_path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise SpecError(where, "(file)", "a readable TOML spec file", exc.strerror) from None
    except UnicodeDecodeError as exc:
        raise SpecError(where, "(encoding)", "UTF-8 text (TOML files are UTF-8)",
                        f"byte 0x{exc.object[exc.start]:02x} at offset {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(where, "(syntax)", "valid TOML", str(exc)) from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise SpecError(where, "(syntax)", "TOML nested less deeply") from None
    return parse_spec(data, spec_path, kernel_path)


def parse_spec(data: dict[str, Any], spec_path: Path, kernel_path: Path | None = None,
               where: str | None = None) -> TaskSpec:
    """Build a TaskSpec from parsed TOML data (or the same tables built in Python: see
    `pragma_ncu.spec.describe`); `where` names the source in messages (default: the spec's path)."""
    w = where or str(spec_path)
    left = placeholders(data)
    if left:
        raise SpecError(w, left[0], f"a value in place of {PLACEHOLDER}, which `pragma-ncu init` "
                        f"drafted for you to fill ({len(left)} left: {', '.join(left)})",
                        _lookup(data, left[0]))
    unknown = set(data) - _TOP_LEVEL
    if unknown:
        raise SpecError(w, sorted(unknown)[0], f"one of the sections {sorted(_TOP_LEVEL)}")
    kernel = _table(data, "kernel", w, required=True)
    name = _str(kernel, "name", w, "kernel.name")
    source_name = kernel.get("source", spec_path.with_suffix(".cu").name)
    if not isinstance(source_name, str):
        raise SpecError(w, "kernel.source", "a path to the .cu file (string)", source_name)
    source = kernel_path or spec_path.parent / source_name
    flags = tuple(str_list(kernel.get("flags", []), w, "kernel.flags"))
    params = parse_params(_table(data, "params", w), w)
    rules = rules_of(Path(source))
    launch = (LaunchSpec(("1",), ("1",)) if not rules.launch_required and "launch" not in data
              else parse_launch(_table(data, "launch", w, required=True), w))
    args = _parse_args(data.get("args"), w)
    shapes = _parse_shapes(data.get("shapes"), w)
    metrics = _table(data, "metrics", w)
    tune = _table(data, "tune", w)
    template_args = tuple(str_list(kernel.get("template_args", []), w, "kernel.template_args"))
    restrictions = tuple(expr_text(r, w, f"tune.restrictions[{i}]") for i, r in
                         enumerate(str_list(tune.get("restrictions", []), w,
                                            "tune.restrictions")))
    spec = TaskSpec(
        kernel_name=name, source_path=Path(source), spec_path=spec_path, launch=launch,
        args=args, shapes=shapes, flags=flags, params=params,
        tolerance=_parse_tolerance(_table(data, "tolerance", w), w),
        reference=_parse_reference(_table(data, "reference", w), spec_path, w),
        bytes_expr=_opt_expr(metrics, "bytes", w), flops_expr=_opt_expr(metrics, "flops", w),
        compute=_compute_kind(metrics, w), template_args=template_args,
        restrictions=restrictions,
    )
    _check_names(spec, w)
    check_template_args({p.name for p in spec.params}, spec.template_args, w)
    _check_target(spec, rules, w)
    check_shapes(spec, where=w)
    return spec


def check_shapes(spec: TaskSpec, shapes: Sequence[Shape] | None = None,
                 memory: Memory = WITHOUT_DEVICE, where: str | None = None,
                 params: Mapping[str, ParamValue] | None = None) -> None:
    """Every shape (the spec's, by default) has positive dims and resolves at `params` (the
    defaults where not given), its integer scalars fit their types, its launch keeps the
    limits the target's programming model fixes (CUDA: 1024 threads a block, ...: known
    without a GPU), and its arrays fit in `memory` (a device's, once a worker said; else the
    stated limit): a bad size is refused here, naming the shape and the argument, before
    anything is compiled or run."""
    w = where or str(spec.spec_path)
    rules = rules_of(spec.source_path)
    for shape in spec.shapes if shapes is None else shapes:
        label = (f"shapes[{spec.shapes.index(shape)}] ({shape.name})" if shape in spec.shapes
                 else f"shape {shape.label()}")
        bad = next(((k, v) for k, v in shape.dims if not is_dim(v)), None)
        if bad is not None:
            raise SpecError(w, f"{label}.{bad[0]}", DIM_EXPECTED, bad[1])
        task = spec.resolve(shape, dict(params or {}))
        for arg in task.args:
            if (problem := arg.out_of_range()) is not None:
                raise SpecError(w, f"{label}: args.{arg.name}", problem, arg.value)
        if (over := memory.exceeded(task)) is not None:
            raise SpecError(w, label, *over)
        _check_launch(task, rules, label, w, params)


def _check_launch(task: ResolvedTask, rules: SpecRules, label: str, w: str,
                  params: Mapping[str, ParamValue] | None) -> None:
    """The launch within what every device of the target allows (its programming model's
    limits): a launch no GPU can run is the spec's mistake, found without one."""
    limits = rules.launch_limits
    if limits is None:
        return
    over = limits.exceeded(task.launch.grid, task.launch.block)
    if over is None:
        return
    given = ", ".join(f"{k}={v}" for k, v in sorted((params or {}).items()))
    raise SpecError(w, f"{label}: {over.field}", f"{over.what} at most {over.top} "
                    f"({limits.model}'s limit on every device"
                    f"{', with ' + given if given else ''})", over.value)


def placeholders(data: Any, field: str = "") -> list[str]:
    """The fields of spec data that still hold a placeholder ("shapes[0].n", ...), in order."""
    if isinstance(data, str):
        return [field] if _PLACEHOLDER.search(data) else []
    if isinstance(data, dict):
        items = [(f"{field}.{k}" if field else str(k), v) for k, v in data.items()]
    elif isinstance(data, list):
        items = [(f"{field}[{i}]", v) for i, v in enumerate(data)]
    else:
        return []
    return [f for path, value in items for f in placeholders(value, path)]


def _lookup(data: Any, field: str) -> Any:
    """The value at `field` ("shapes[0].n"), for a message (None where a key holds . or [)."""
    try:
        for part in re.findall(r"[^.\[\]]+", field):
            data = data[int(part)] if isinstance(data, list) else data[part]
    except (KeyError, IndexError, ValueError, TypeError):
        return None
    return data


def _compute_kind(metrics: dict[str, Any], w: str) -> str:
    kind = metrics.get("compute", "fp32")
    if not isinstance(kind, str) or kind not in COMPUTE_KINDS:
        raise SpecError(w, "metrics.compute", f"one of {', '.join(COMPUTE_KINDS)}", kind)
    return str(kind)


def _table(data: dict[str, Any], key: str, w: str, required: bool = False) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        if required:
            raise SpecError(w, key, f"a [{key}] table")
        return {}
    if not isinstance(value, dict):
        raise SpecError(w, key, "a table", value)
    if key in _KEYS:
        _known_keys(value, _KEYS[key], w, key)
    return value


def _known_keys(table: dict[str, Any], allowed: set[str], w: str, field: str) -> None:
    """A misspelled key is an error, not a silently ignored setting."""
    for key in table:
        if key not in allowed:
            raise SpecError(w, f"{field}.{key}", f"one of the keys {sorted(allowed)}")


def _str(table: dict[str, Any], key: str, w: str, field: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SpecError(w, field, "a non-empty string", value)
    return value


def str_list(value: Any, where: str, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SpecError(where, field, "a list of strings", value)
    return value


def finite(value: Any, where: str, field: str, expected: str = "a finite number",
           within: Callable[[float], bool] = lambda _: True) -> float:
    """`value` when it is a number (no bool), finite (TOML has nan and inf) and `within` its
    range; else a SpecError naming `field` and `expected`. Every number a spec holds passes
    here, so none reaches a run as nan or inf."""
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or not within(value)):
        raise SpecError(where, field, expected, value)
    return value


def expr_text(value: Any, where: str, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SpecError(where, field, "an expression (string) or a number", value)
    if not isinstance(value, str):
        finite(value, where, field, "a finite number (or an expression)")
    text = str(value)
    try:
        expr.parse(text)
    except ExpressionError as exc:
        raise SpecError(where, field, "a valid expression", str(exc)) from None
    return text


def _opt_expr(table: dict[str, Any], key: str, w: str) -> str | None:
    return expr_text(table[key], w, f"metrics.{key}") if key in table else None


def _expr_list(value: Any, w: str, field: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not 1 <= len(items) <= 3:
        raise SpecError(w, field, "1 to 3 expressions", value)
    return tuple(expr_text(v, w, f"{field}[{i}]") for i, v in enumerate(items))


def parse_params(table: dict[str, Any], where: str) -> tuple[Param, ...]:
    params = []
    for name, value in table.items():
        field = f"params.{name}"
        if not name.isidentifier():
            raise SpecError(where, field, "a C identifier as the parameter name", name)
        if isinstance(value, dict):
            _known_keys(value, _KEYS["param"], where, field)
            if "default" not in value:
                raise SpecError(where, f"{field}.default", "a default value")
            values = value.get("values", [])
            if not isinstance(values, list) or len(set(map(repr, values))) != len(values):
                raise SpecError(where, f"{field}.values", "a list of distinct candidate values",
                                values)
            flag = value.get("flag")
            if flag is not None and (not isinstance(flag, str) or not flag.startswith("-")):
                raise SpecError(where, f"{field}.flag", "a compiler flag such as "
                                "\"--use_fast_math\" or \"-maxrregcount={}\"", flag)
            params.append(Param(name, _scalar(value["default"], where, field),
                                tuple(_scalar(v, where, f"{field}.values") for v in values), flag))
        else:
            params.append(Param(name, _scalar(value, where, field)))
    return tuple(params)


def _scalar(value: Any, w: str, field: str) -> int | float | bool | str:
    if not isinstance(value, (int, float, bool, str)):
        raise SpecError(w, field, "a number, boolean or string", value)
    if isinstance(value, float):
        finite(value, w, field, "a finite number, a boolean or a string")
    return value


def parse_launch(table: dict[str, Any], where: str) -> LaunchSpec:
    for key in ("grid", "block"):
        if key not in table:
            raise SpecError(where, f"launch.{key}", "1 to 3 expressions")
    return LaunchSpec(
        grid=_expr_list(table["grid"], where, "launch.grid"),
        block=_expr_list(table["block"], where, "launch.block"),
        shared_mem=expr_text(table.get("shared_mem", "0"), where, "launch.shared_mem"),
    )


def _parse_args(value: Any, w: str) -> tuple[ArgSpec, ...]:
    if not isinstance(value, list) or not value:
        raise SpecError(w, "args", "a non-empty array of [[args]] tables", value)
    args, seen = [], set()
    for i, item in enumerate(value):
        f = f"args[{i}]"
        if not isinstance(item, dict):
            raise SpecError(w, f, "a table", item)
        _known_keys(item, _KEYS["arg"], w, f)
        name = _str(item, "name", w, f"{f}.name")
        if not name.isidentifier() or name in seen:
            raise SpecError(w, f"{f}.name", "a unique identifier", name)
        seen.add(name)
        args.append(_parse_arg(item, name, w, f))
    if not any(a.role in (Role.OUTPUT, Role.INOUT) for a in args):
        raise SpecError(w, "args", "at least one argument with role output or inout")
    return tuple(args)


def _parse_arg(item: dict[str, Any], name: str, w: str, f: str) -> ArgSpec:
    dtype = dtypes.lookup(str(item.get("dtype", "")))
    if dtype is None:
        raise SpecError(w, f"{f}.dtype", f"one of {', '.join(dtypes.dtype_names())}",
                        item.get("dtype"))
    roles = [r.value for r in Role]
    if item.get("role") not in roles:
        raise SpecError(w, f"{f}.role", f"one of {', '.join(roles)}", item.get("role"))
    role = Role(item["role"])
    if role == Role.SCALAR:
        if "value" not in item:
            raise SpecError(w, f"{f}.value", "the scalar's value (an expression or a number)")
        return ArgSpec(name, dtype, role, value=expr_text(item["value"], w, f"{f}.value"))
    shape = item.get("shape")
    if not isinstance(shape, list) or not shape:
        raise SpecError(w, f"{f}.shape", "a non-empty list of size expressions", shape)
    dims = tuple(expr_text(s, w, f"{f}.shape[{j}]") for j, s in enumerate(shape))
    init = _parse_init(item.get("init"), dtype, w, f) if role != Role.OUTPUT else None
    return ArgSpec(name, dtype, role, shape=dims, init=init)


def _parse_init(value: Any, dtype: dtypes.DType, w: str, f: str) -> Init:
    if value is None:
        return Init("normal", 0.0, 1.0) if dtype.is_float else Init("randint", 0, 100)
    if not isinstance(value, dict) or not isinstance(value.get("dist"), str) \
            or value["dist"] not in _DISTS:
        raise SpecError(w, f"{f}.init", f"a table with dist one of {sorted(_DISTS)}", value)
    a_key, b_key = _DISTS[value["dist"]]
    for key in (a_key, b_key):
        if key not in value:
            raise SpecError(w, f"{f}.init.{key}", f"a value for '{key}' ({value['dist']})")
    if value["dist"] == "randint" and dtype.is_float:
        raise SpecError(w, f"{f}.init.dist", "normal or uniform for a floating-point argument",
                        "randint")
    a = expr_text(value[a_key], w, f"{f}.init.{a_key}")
    b = expr_text(value[b_key], w, f"{f}.init.{b_key}")
    _check_bounds(value, a_key, b_key, w, f"{f}.init")
    return Init(value["dist"], a, b)


def _check_bounds(init: dict[str, Any], a_key: str, b_key: str, w: str, field: str) -> None:
    """What literal numbers can tell of a distribution: std >= 0, low < high (expressions
    over dims are checked when they are drawn)."""
    a, b = init[a_key], init[b_key]
    if isinstance(b, str) or (a_key == "low" and isinstance(a, str)):
        return
    if b_key == "std" and b < 0:
        raise SpecError(w, f"{field}.std", "a finite number >= 0", b)
    if a_key == "low" and not a < b:
        raise SpecError(w, f"{field}.high", f"a number above low ({a}): the range is "
                        "[low, high)", b)


def _parse_shapes(value: Any, w: str) -> tuple[Shape, ...]:
    if not isinstance(value, list) or not value:
        raise SpecError(w, "shapes", "a non-empty array of [[shapes]] tables", value)
    shapes, names = [], set()
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise SpecError(w, f"shapes[{i}]", "a table of dim = integer", item)
        name = str(item.get("name", f"shape{i}"))
        if name in names:
            raise SpecError(w, f"shapes[{i}].name", "a unique name", name)
        names.add(name)
        dims = []
        for key, v in item.items():
            if key == "name":
                continue
            if not is_dim(v):
                raise SpecError(w, f"shapes[{i}].{key}", DIM_EXPECTED, v)
            dims.append((key, v))
        shapes.append(Shape(name, tuple(dims)))
    return tuple(shapes)


def _parse_tolerance(table: dict[str, Any], w: str) -> Tolerance:
    per_dtype = []
    fraction = finite(table.get("max_bad_fraction", 0.0), w, "tolerance.max_bad_fraction",
                      "a number in [0, 1)", lambda v: 0 <= v < 1)
    for key, value in table.items():
        if key == "max_bad_fraction":
            continue
        dtype = dtypes.lookup(key)
        if dtype is None or not isinstance(value, dict):
            raise SpecError(w, f"tolerance.{key}", "a dtype name mapped to {atol, rtol}", value)
        _known_keys(value, {"atol", "rtol"}, w, f"tolerance.{key}")
        atol, rtol = value.get("atol", dtype.atol), value.get("rtol", dtype.rtol)
        for name, v in (("atol", atol), ("rtol", rtol)):
            finite(v, w, f"tolerance.{key}.{name}", "a non-negative number (finite)",
                   lambda v: v >= 0)
        per_dtype.append((dtype.name, float(atol), float(rtol)))
    return Tolerance(tuple(per_dtype), float(fraction))


def _parse_reference(table: dict[str, Any], spec_path: Path, w: str) -> Reference:
    library = table.get("library", "numpy")
    if library not in REFERENCE_LIBRARIES:
        raise SpecError(w, "reference.library", f"one of {', '.join(REFERENCE_LIBRARIES)} (what "
                        "the function takes and returns: NumPy arrays, torch tensors, CuPy "
                        "arrays)", library)
    if "function" not in table:
        if "library" in table:
            raise SpecError(w, "reference.function", f"the {library} function that "
                            "reference.library describes ('file.py:function')")
        return Reference(None, spec_path.parent)
    fn = table["function"]
    if not isinstance(fn, str) or fn.count(":") != 1 or not all(fn.split(":")):
        raise SpecError(w, "reference.function", "'file.py:function' or 'module:function'", fn)
    return Reference(fn, spec_path.parent, library)


def _check_names(spec: TaskSpec, w: str) -> None:
    """Every name in an expression is a param or a dim that every shape defines."""
    params = {p.name for p in spec.params}
    used: dict[str, str] = {}
    for field, text in _all_exprs(spec):
        for name in expr.names(text):
            used.setdefault(name, field)
    for i, shape in enumerate(spec.shapes):
        dims = shape.as_dict()
        for name, field in used.items():
            if name not in params and name not in dims:
                raise SpecError(w, f"shapes[{i}] ({shape.name})",
                                f"a value for '{name}' (used in {field})")


def _check_target(spec: TaskSpec, rules: SpecRules, w: str) -> None:
    """What the kernel's target asks (e.g. a C/C++ function takes C types and is found by its
    C name)."""
    allowed = tuple(dtypes.c_types()) if rules.c_types_only else rules.dtypes
    for i, a in enumerate(spec.args):
        if allowed is not None and a.dtype.name not in allowed:
            raise SpecError(w, f"args[{i}].dtype", f"{rules.dtypes_reason} ("
                            + ", ".join(allowed) + ")", a.dtype.name)
    if spec.template_args and rules.template_args_refused:
        raise SpecError(w, "kernel.template_args", rules.template_args_refused,
                        list(spec.template_args))


def check_template_args(params: set[str], template_args: tuple[str, ...] | list[str],
                        where: str) -> None:
    """Template arguments name declared parameters. A jinja2 source may take them too, for a
    kernel that stays a C++ template once rendered (the source moves make such a template of
    a templated kernel); that no name is both a jinja2 variable and a template argument is
    checked where the text is rendered (`spec.template.instantiate`)."""
    for name in template_args:
        if name not in params:
            raise SpecError(where, "kernel.template_args", f"names of [params] ({sorted(params)})",
                            name)


def _all_exprs(spec: TaskSpec) -> list[tuple[str, str]]:
    out = [(f"launch.grid[{i}]", e) for i, e in enumerate(spec.launch.grid)]
    out += [(f"launch.block[{i}]", e) for i, e in enumerate(spec.launch.block)]
    out.append(("launch.shared_mem", spec.launch.shared_mem))
    for a in spec.args:
        out += [(f"args.{a.name}.shape", s) for s in a.shape]
        if a.value is not None:
            out.append((f"args.{a.name}.value", str(a.value)))
        if a.init is not None:
            out += [(f"args.{a.name}.init", str(a.init.a)), (f"args.{a.name}.init", str(a.init.b))]
    out += [("metrics.bytes", spec.bytes_expr)] if spec.bytes_expr else []
    out += [("metrics.flops", spec.flops_expr)] if spec.flops_expr else []
    out += [(f"tune.restrictions[{i}]", r) for i, r in enumerate(spec.restrictions)]
    return out


def spec_tables(spec: TaskSpec) -> dict[str, Any]:
    """The TOML tables `spec` was (or could have been) parsed from: what the tune loop lays a
    variant's overlay over, and what a run records for a spec built in Python. Paths are
    absolute, so the tables mean the same from any folder; `parse_spec` of them gives `spec`
    again (but for the reference's import folder, which is the spec's folder there)."""
    data: dict[str, Any] = {"kernel": {
        "name": spec.kernel_name, "source": str(spec.source_path.resolve()),
        "flags": list(spec.flags), "template_args": list(spec.template_args)}}
    data["params"] = {p.name: ({"default": p.default, "values": list(p.values),
                                **({"flag": p.flag} if p.flag else {})}
                               if p.values or p.flag else p.default) for p in spec.params}
    if rules_of(spec.source_path).launch_required or spec.launch != LaunchSpec(("1",), ("1",)):
        data["launch"] = {"grid": list(spec.launch.grid), "block": list(spec.launch.block),
                          "shared_mem": spec.launch.shared_mem}
    data["args"] = [_arg_table(a) for a in spec.args]
    data["shapes"] = [{"name": s.name, **s.as_dict()} for s in spec.shapes]
    data["tolerance"] = {**{name: {"atol": atol, "rtol": rtol}
                            for name, atol, rtol in spec.tolerance.per_dtype},
                         "max_bad_fraction": spec.tolerance.max_bad_fraction}
    if spec.reference.function:
        data["reference"] = {"function": _reference_function(spec),
                             "library": spec.reference.library}
    metrics = {"bytes": spec.bytes_expr, "flops": spec.flops_expr, "compute": spec.compute}
    data["metrics"] = {k: v for k, v in metrics.items() if v is not None}
    if spec.restrictions:
        data["tune"] = {"restrictions": list(spec.restrictions)}
    return data


def _arg_table(a: ArgSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": a.name, "dtype": a.dtype.name, "role": a.role.value}
    if a.role == Role.SCALAR:
        return {**out, "value": a.value}
    out["shape"] = list(a.shape)
    if a.init is not None and isinstance(a.init.a, str):  # given (a default's are numbers)
        low, high = _DISTS[a.init.dist]
        out["init"] = {"dist": a.init.dist, low: a.init.a, high: a.init.b}
    return out


def _reference_function(spec: TaskSpec) -> str:
    """'file.py:func' with the file's absolute path (it is found from any folder then)."""
    target, name = str(spec.reference.function).split(":")
    if not target.endswith(".py"):
        return f"{target}:{name}"
    base = spec.reference.base_dir or spec.spec_path.parent
    return f"{(Path(base) / target).resolve()}:{name}"


def toml_text(data: Mapping[str, Any]) -> str:
    """`data` (spec tables) as TOML, in its order: tables ([kernel]) and arrays of tables
    ([[args]]), values inline (what the tune loop shows the coder, and writes of a spec built
    in Python)."""
    lines: list[str] = []
    for table, body in data.items():
        if isinstance(body, list):
            for item in body:
                lines += ["", f"[[{table}]]", *(f"{_key(k)} = {_toml(v)}" for k, v in item.items())]
        else:
            lines += ["", f"[{table}]", *(f"{_key(k)} = {_toml(v)}" for k, v in body.items())]
    return "\n".join(lines).lstrip("\n") + "\n"


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # JSON's escapes are TOML's too
