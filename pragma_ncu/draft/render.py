"""A `KernelDraft` written out: the TOML spec, with a comment on every guess, and the reference
stub. Text is built by hand because a TOML writer would drop the comments, which are the point.
"""

from __future__ import annotations

import json
import keyword
import textwrap

from pragma_ncu.draft.infer import DraftArg, KernelDraft
from pragma_ncu.spec import dtypes
from pragma_ncu.spec.file import PLACEHOLDER

_COLUMN = 36  # where comments start
_INIT_DEFAULT = {True: "normal(0, 1)", False: "randint(0, 100); an index array needs its bound, "
                 "high = \"n\""}


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value))  # a TOML basic string: the same escapes


def _line(text: str, note: str = "") -> str:
    return f"{text.ljust(_COLUMN - 1)} # {note}" if note else text


def spec_text(draft: KernelDraft, source_rel: str, reference: str | None, library: str,
              command_path: str) -> str:
    """The draft spec; `source_rel` and `reference` ('file.py:function') are relative to the
    spec, `command_path` is the kernel as the user named it."""
    out = _header(draft, command_path)
    out += _kernel(draft, source_rel)
    out += _params(draft)
    if draft.target == "cuda":
        out += _launch(draft)
    for a in draft.args:
        out += _arg(a, draft)
    out += _shapes(draft)
    out += _tolerance(draft)
    out += _reference(reference, library)
    return "\n".join(out) + "\n"


def _header(d: KernelDraft, command_path: str) -> list[str]:
    return [
        f"# Spec of {d.kernel} ({d.source.name}, line {d.line}), drafted by `pragma-ncu init` "
        "from its signature.",
        f'# Replace every "{PLACEHOLDER}" (bench names any left) and check every GUESS; the '
        "format is",
        f"# docs/spec-format.md. Then: pragma-ncu bench --kernel {command_path}",
        "",
    ]


def _kernel(d: KernelDraft, source_rel: str) -> list[str]:
    out = ["[kernel]", f"name = {toml_value(d.kernel)}", f"source = {toml_value(source_rel)}"]
    if d.template_args:
        out.append(_line(f"template_args = {toml_value(list(d.template_args))}",
                         f"{d.kernel}<{', '.join(d.template_args)}> is instantiated"))
    out.append(_line(f"flags = {toml_value(list(d.flags))}", f"GUESS: {d.flags_note}"))
    return out + [""]


def _params(d: KernelDraft) -> list[str]:
    if not d.params:
        return []
    out = ["[params]"]
    for p in d.params:
        default = PLACEHOLDER if p.default is None else p.default
        out.append(_line(f"{p.name} = {{ default = {toml_value(default)} }}", p.note))
    return out + ["# Add values = [...] to a parameter to let autotune search it.", ""]


def _launch(d: KernelDraft) -> list[str]:
    assert d.launch is not None
    shared = (_line(f"shared_mem = {toml_value(PLACEHOLDER)}", "the kernel declares extern "
                    "__shared__: its dynamic shared memory in bytes (an expression)")
              if d.dynamic_shared else _line('shared_mem = "0"', "no extern __shared__ array"))
    return ["[launch]",
            _line(f"grid = {toml_value(list(d.launch.grid))}", d.launch.grid_note),
            _line(f"block = {toml_value(list(d.launch.block))}", d.launch.block_note),
            shared, ""]


def _arg(a: DraftArg, d: KernelDraft) -> list[str]:
    out = ["[[args]]", f"name = {toml_value(a.name)}",
           _line(f"dtype = {toml_value(a.dtype or PLACEHOLDER)}", a.dtype_note),
           _line(f"role = {toml_value(a.role)}", a.role_note)]
    if a.role == "scalar":
        value = a.value if a.value is not None else PLACEHOLDER
        out.append(_line(f"value = {toml_value(value)}", a.value_note))
        return out + [""]
    dims = ", ".join(d.dims) or "none yet"
    note = f"its size(s): expressions over the dims ({dims})"
    if a.lanes > 1:
        note += f", counting {a.dtype} values ({a.lanes} per element)"
    out.append(_line(f"shape = {toml_value([PLACEHOLDER])}", note))
    if a.init is not None:
        out.append(_line(f"init = {a.init}", "GUESS: the values a bool can hold"))
    elif a.role != "output":
        found = dtypes.lookup(a.dtype) if a.dtype else None
        is_float = found.is_float if found is not None else True
        out.append(f"# init = {{ dist = ... }}  (default: {_INIT_DEFAULT[is_float]})")
    return out + [""]


def _shapes(d: KernelDraft) -> list[str]:
    out = ["[[shapes]]", _line('name = "draft"', "GUESS: one shape; add more (an odd-sized one "
                               "catches tail bugs)")]
    out += [_line(f"{dim} = {toml_value(PLACEHOLDER)}", f"the size of {dim}") for dim in d.dims]
    if not d.dims:
        out.append("# No integer argument: name here the dims the shapes above use (n = 1024).")
    return out + [""]


def _tolerance(d: KernelDraft) -> list[str]:
    out = ["[tolerance]"]
    seen: list[str] = []
    for a in d.args:
        if a.role in ("output", "inout") and a.dtype and a.dtype not in seen:
            seen.append(a.dtype)
            t = dtypes.lookup(a.dtype)
            assert t is not None
            out.append(_line(f"{a.dtype} = {{ atol = {t.atol!r}, rtol = {t.rtol!r} }}",
                             f"GUESS: pragma-ncu's default for {a.dtype} outputs"))
    out.append(_line("max_bad_fraction = 0.0", "the share of elements allowed outside it"))
    return out + [""]


def _reference(reference: str | None, library: str) -> list[str]:
    if reference is None:
        return ["# No [reference]: the kernel as it is now is the reference (tune compares its",
                "# candidates with it). To check the kernel itself, write one:",
                "# [reference]", '# function = "reference.py:my_kernel"', '# library = "numpy"']
    return ["[reference]",
            _line(f"function = {toml_value(reference)}", "a stub: write its body"),
            _line(f"library = {toml_value(library)}", "numpy (host), torch or cupy (GPU)")]


_IMPORTS = {"numpy": "import numpy as np", "torch": "import torch", "cupy": "import cupy as cp"}
_KINDS = {
    "numpy": "NumPy arrays",
    "torch": "torch tensors (on the GPU for a CUDA kernel, on the CPU for a C/C++ one)",
    "cupy": "CuPy arrays on the GPU",
}


def function_name(kernel: str) -> str:
    return kernel + "_ref" if keyword.iskeyword(kernel) else kernel


def reference_text(draft: KernelDraft, library: str, file_name: str) -> str:
    """A reference stub with the right signature: it raises until its body is written."""
    ins = [a.name for a in draft.args if a.role in ("input", "inout", "scalar")]
    outs = [a.name for a in draft.args if a.role in ("output", "inout")]
    returns = outs[0] if len(outs) == 1 else "{" + ", ".join(f"'{n}': ..." for n in outs) + "}"
    signature = ", ".join(["*", *ins]) if ins else ""
    about = (f"pragma-ncu calls it with keyword arguments: every input and inout array by its "
             f"name, as {_KINDS[library]} shaped as the spec says, in higher precision than the "
             "kernel (fp16 and bf16 as float32, integers as int64), and every scalar by its name. "
             "It returns the outputs: the array itself for one output, else a dict keyed by name. "
             "Compute in at least float32 (float64 for sums over many terms). See "
             "docs/spec-format.md.")
    doc = (f'"""The reference of {draft.kernel} ({draft.source.name}), drafted by '
           '`pragma-ncu init`.\n\n'
           + textwrap.fill(about, 96) + '\n"""\n')
    return (
        f"{doc}\n{_IMPORTS[library]}  # noqa: F401\n\n\n"
        f"def {function_name(draft.kernel)}({signature}):\n"
        f'    """{", ".join(outs)} of {draft.kernel}."""\n'
        f'    raise NotImplementedError("write the reference in {file_name}: return {returns}")\n'
    )
