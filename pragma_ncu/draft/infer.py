"""From a parsed source to a draft spec: which function is the kernel, and what each argument,
knob and template parameter becomes.

The rules (docs/own-kernel.md shows them at work):
- a pointer argument is an array of its element type; `const T*` is an input, a `T*` is an
  output, inout or input according to its first access in the body (`syntax.roles`);
- an integer scalar is a problem dim of the same name (`value = "n"`, with `n` in [[shapes]]);
  a floating-point or bool scalar needs a value (a placeholder);
- `#ifndef NAME / #define NAME v` is a parameter with default v; a kernel template's
  parameters are parameters too, listed in `kernel.template_args`;
- the launch is read from the kernel's indexing (`draft.launch`): one thread per element or
  row, V elements a thread, a grid-stride loop, a warp per row, a block per output, a 2-D
  tile; blocks of the kernel's `__launch_bounds__`, of its shared memory or of a BLOCK knob,
  else 256. Where it cannot tell, a placeholder says what.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, replace
from pathlib import Path

from pragma_ncu.draft.ctype import ElementType, element_type
from pragma_ncu.draft.launch import DraftLaunch, draft_launch
from pragma_ncu.infra.errors import DraftError
from pragma_ncu.spec import dtypes
from pragma_ncu.spec.expr import function_names
from pragma_ncu.spec.model import ArgSpec, ParamValue, Role
from pragma_ncu.syntax.facts import CFunction, CParam, SourceFacts
from pragma_ncu.syntax.roles import Access, accesses
from pragma_ncu.syntax.tree import strip_comments

_INT = re.compile(r"\(?\s*([+-]?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*\)?")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?[fFlL]?")


@dataclass(frozen=True)
class DraftArg:
    """One kernel argument as the draft describes it; None where the user must fill in."""

    name: str
    role: str
    dtype: str | None
    dtype_note: str
    role_note: str
    lanes: int = 1
    value: str | None = None  # scalars: a dim or param name; None for a placeholder
    value_note: str = ""
    init: str | None = None  # an explicit init table (TOML), where the default would be wrong


@dataclass(frozen=True)
class DraftParam:
    name: str
    default: ParamValue | None  # None: a placeholder
    note: str


@dataclass(frozen=True)
class KernelDraft:
    """Everything `init` concluded about one kernel, before it is written as TOML."""

    kernel: str
    line: int
    source: Path
    target: str  # the spec's target: "cuda" or "cpu"
    args: tuple[DraftArg, ...]
    params: tuple[DraftParam, ...]
    template_args: tuple[str, ...]
    dims: tuple[str, ...]
    launch: DraftLaunch | None  # the launch's grid and block (None on the CPU)
    dynamic_shared: bool  # the kernel declares `extern __shared__`
    flags: tuple[str, ...]
    flags_note: str

    @property
    def block(self) -> str | None:
        """The launch's block (its x dimension), None on the CPU."""
        return self.launch.block[0] if self.launch is not None else None

    @property
    def block_note(self) -> str:
        return self.launch.block_note if self.launch is not None else ""

    @property
    def device(self) -> str:
        """What runs the kernel, in a word: GPU or CPU."""
        return "GPU" if self.target == "cuda" else "CPU"


def choose_kernel(facts: SourceFacts, target: str, source: Path,
                  name: str | None = None) -> CFunction:
    """The function `init` drafts a spec for: the one kernel of the file, or the one named."""
    kernels = [f for f in facts.functions if _is_kernel(f, target, source)]
    if name is not None:
        chosen = [f for f in kernels if f.name == name]
        if chosen:
            return chosen[0]
        other = facts.named(name)
        why = _not_a_kernel(other[0], target, source) if other else "no function of that name"
        raise DraftError(f"{source.name}: {name!r} is not a kernel here ({why}); "
                         + _listing(kernels, target, source))
    unique = sorted({f.name for f in kernels})
    if len(unique) == 1:
        return kernels[0]
    if not unique:
        raise DraftError(f"{source.name}: " + _listing(kernels, target, source))
    raise DraftError(f"{source.name} defines {len(unique)} kernels ({', '.join(unique)}); "
                     "choose one with --kernel NAME")


def kernel_names(facts: SourceFacts, target: str, source: Path) -> list[str]:
    """The kernels a source defines: its __global__ functions (CUDA), or the C functions a
    shared object of it exports that could be one (the CPU)."""
    return sorted({f.name for f in facts.functions if _is_kernel(f, target, source)})


def kernels_like(facts: SourceFacts, target: str, source: Path,
                 args: tuple[ArgSpec, ...]) -> list[str]:
    """The kernels of a source that take `args` (a spec's): as many parameters, an array
    where the spec has an array and a value where a scalar, of the same dtype where the type
    is known. The variants of one kernel in other files have its signature."""
    return sorted({f.name for f in facts.functions if _is_kernel(f, target, source)
                   and len(f.params) == len(args)
                   and all(_takes(p, a, f, facts) for p, a in zip(f.params, args, strict=True))})


def _takes(p: CParam, arg: ArgSpec, fn: CFunction, facts: SourceFacts) -> bool:
    if (p.pointers == 0) != (arg.role == Role.SCALAR):
        return False
    templates = {t.name: t.default for t in fn.template or () if t.kind == "type"}
    dtype = element_type(p.type_name, facts, templates).dtype
    return dtype is None or dtype == arg.dtype.name


def _is_kernel(f: CFunction, target: str, source: Path) -> bool:
    if target == "cuda":
        return f.is_global
    return not _not_a_kernel(f, target, source)


def _not_a_kernel(f: CFunction, target: str, source: Path) -> str:
    """Why `f` cannot be the kernel ("" when it can)."""
    if target == "cuda":
        return "" if f.is_global else "not a __global__ function"
    if f.name == "main":
        return "it is main()"
    if f.internal:
        return "it is static or inline, so the shared object does not export it"
    if f.template is not None or not f.c_linkage:
        return 'it has C++ linkage: declare it extern "C"'
    if not any(p.pointers for p in f.params):
        return "it takes no array (pointer) argument to write its result into"
    return ""


def _listing(kernels: list[CFunction], target: str, source: Path) -> str:
    if kernels:
        return "kernels here: " + ", ".join(sorted({f.name for f in kernels}))
    if target == "cuda":
        return "no __global__ function was found (is this the CUDA file?)"
    return ("no exported C function with an array (pointer) argument was found (a C++ "
            "function must be extern \"C\"; static and inline ones are not exported)")


def infer(facts: SourceFacts, fn: CFunction, source: Path, target: str) -> KernelDraft:
    """The draft of kernel `fn` of `source` (facts from `cparse.parse_source`)."""
    if fn.template is not None and any(t.kind == "other" for t in fn.template):
        raise DraftError(f"{source.name}:{fn.line}: {fn.name}'s template has a parameter pack "
                         "or template template parameter, which a spec cannot set")
    params = [DraftParam(k.name, knob_value(k.value), f"knob: #ifndef {k.name} at line {k.line}")
              for k in facts.knobs]
    params += _template_params(fn, params)
    names = {p.name for p in params}
    found = accesses(fn, facts)
    args = tuple(_arg(p, fn, facts, names, found) for p in fn.params)
    _check_outputs(args, fn, source)
    dims = tuple(a.value for a in args if a.role == "scalar" and a.value is not None
                 and a.value not in names)
    launch = None if target == "cpu" else draft_launch(
        fn, facts, names, {p.name: a.value for p, a in zip(fn.params, args, strict=True)
                           if a.role == "scalar" and a.value is not None})
    if launch is not None and launch.new_param is not None:
        name, default = launch.new_param
        params.append(DraftParam(name, default, "GUESS: threads per block of the launch below; "
                                 "add values = [...] to tune it"))
    flags = ("-O3", "-fopenmp") if target == "cpu" and facts.openmp else ("-O3",)
    flags_note = ("the file has #pragma omp lines, which need -fopenmp" if "-fopenmp" in flags
                  else "optimized host code; add others (e.g. -use_fast_math) as you need")
    body = strip_comments(fn.body.text.decode(errors="replace")) if fn.body is not None else ""
    return KernelDraft(
        kernel=fn.name, line=fn.line, source=source, target=target, args=args,
        params=tuple(params), template_args=tuple(t.name for t in fn.template or ()),
        dims=dims, launch=launch,
        dynamic_shared=bool(re.search(r"extern\s+__shared__", body)),
        flags=flags, flags_note=flags_note,
    )


def knob_value(text: str) -> ParamValue:
    """A #define's value as a parameter default: an int, a float, a bool, else the text."""
    text = text.strip()
    if not text:
        return 1  # `#define FLAG`: defined
    match = _INT.fullmatch(text)
    if match:
        return int(match.group(1), 0)
    if _FLOAT.fullmatch(text):
        return float(text.rstrip("fFlL"))
    if text in ("true", "false"):
        return text == "true"
    return text


def _template_params(fn: CFunction, knobs: list[DraftParam]) -> list[DraftParam]:
    out = []
    for t in fn.template or ():
        if any(k.name == t.name for k in knobs):
            raise DraftError(f"template parameter {t.name} of {fn.name} is also a #define knob; "
                             "rename one")
        default: ParamValue | None = None
        if t.default is not None:
            default = t.default if t.kind == "type" else knob_value(t.default)
        what = "a type (e.g. float)" if t.kind == "type" else f"a value of type {t.type_name}"
        out.append(DraftParam(t.name, default, f"template parameter of {fn.name}: {what}"))
    return out


def _arg(p: CParam, fn: CFunction, facts: SourceFacts, params: set[str],
         found: dict[str, tuple[Access, ...]]) -> DraftArg:
    if p.type_name == "...":
        raise DraftError(f"line {p.line}: {fn.name} is variadic ({p.text}); a spec cannot "
                         "describe its arguments")
    if p.pointers > 1 or (p.reference and p.pointers == 0):
        raise DraftError(f"line {p.line}: argument {p.text!r} of {fn.name} is "
                         + ("a pointer to pointers" if p.pointers > 1 else "a C++ reference")
                         + "; a spec describes arrays (T*) and scalars passed by value")
    templates = {t.name: t.default for t in fn.template or () if t.kind == "type"}
    element = element_type(p.type_name, facts, templates)
    if element.dtype is None and not element.via.startswith("template parameter"):
        raise DraftError(f"line {p.line}: argument {p.text!r} of {fn.name}: {element.problem}; "
                         f"spec dtypes are {', '.join(dtypes.dtype_names())}")
    dtype_note = _dtype_note(p, element)
    uses = found.get(p.name, ())
    if keyword.iskeyword(p.name):  # the reference takes arguments by name: `in` cannot be one
        p = replace(p, name=p.name + "_")
        dtype_note += f" (named {p.name}: a Python reference cannot take a parameter {p.name[:-1]})"
    if p.pointers == 0:
        return _scalar(p, element, dtype_note, params)
    role, role_note = role_of(p, uses)
    init = None
    if p.type_name in ("bool", "_Bool") and role != "output":
        init = '{ dist = "randint", low = 0, high = 2 }'
    return DraftArg(p.name, role, element.dtype, dtype_note, role_note, element.lanes,
                    init=init)


def _dtype_note(p: CParam, element: ElementType) -> str:
    note = p.text
    if element.via:
        note += f" ({element.via})"
    if element.dtype is None:
        note += ": fill in the dtype of the type you instantiate"
    if p.type_name in ("bool", "_Bool"):
        note += ": a bool is one byte, 0 or 1"
    if p.type_name in ("char",):
        note += ": plain char taken as signed"
    return note


def role_of(param: CParam, found: tuple[Access, ...]) -> tuple[str, str]:
    """An array's role and the reason, from its constness and its first access."""
    if param.const_target:
        return "input", "const: only read"
    if not found:
        return "input", "GUESS: never read or written in the kernel's body"
    first = found[0]
    if first.kind == "write":
        return "output", f"GUESS: written before any read ({first.describe()})"
    if first.kind == "unknown":
        return "inout", (f"GUESS: handed to code this file does not show ({first.describe()}): "
                         "assumed read and written")
    if all(a.kind == "read" for a in found):
        return "input", f"GUESS: not const, but only read ({first.describe()})"
    if first.kind == "update":
        return "inout", f"GUESS: updated in place first ({first.describe()}): its values matter"
    return "inout", f"GUESS: read before it is written ({first.describe()}): its values matter"


def _scalar(p: CParam, element: ElementType, dtype_note: str, params: set[str]) -> DraftArg:
    dtype = element.dtype
    found = dtypes.lookup(dtype) if dtype is not None else None
    if found is not None and not found.is_float and p.type_name not in ("bool", "_Bool"):
        if p.name in params:
            return DraftArg(p.name, "scalar", dtype, dtype_note, "", value=p.name,
                            value_note=f"GUESS: the value of the parameter {p.name}")
        dim = dim_name(p.name)
        return DraftArg(p.name, "scalar", dtype, dtype_note, "", value=dim,
                        value_note=f"a problem dim: give {dim} a size in [[shapes]]")
    what = "0 or 1" if p.type_name in ("bool", "_Bool") else "a number, e.g. 1e-6"
    return DraftArg(p.name, "scalar", dtype, dtype_note, "", value=None,
                    value_note=f"the value the kernel gets: {what} (or an expression of dims)")


def dim_name(name: str) -> str:
    """A scalar's name as a dim: itself, unless expressions or [[shapes]] reserve it."""
    reserved = keyword.iskeyword(name) or name in function_names() or name == "name"
    return name + "_" if reserved else name


def _check_outputs(args: tuple[DraftArg, ...], fn: CFunction, source: Path) -> None:
    if not any(a.role in ("output", "inout") for a in args):
        arrays = [a.name for a in args if a.role != "scalar"]
        raise DraftError(f"{source.name}:{fn.line}: {fn.name} writes none of its arguments "
                         f"(arrays: {', '.join(arrays) or 'none'}); a spec needs an output. "
                         "If it writes through a const pointer, drop the const")
