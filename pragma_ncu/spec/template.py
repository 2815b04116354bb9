"""Instantiating a kernel template at one parameter point.

Three ways to expose parameters, all declared in the spec's [params]:
- `#define` knobs in a plain .cu file: each parameter is passed as `-DNAME=value` (see
  `macro_params`), so nothing happens to the text here;
- a jinja2 template (`foo.cu.j2`): rendered with the parameters as variables; an undefined name
  is an error, not an empty string. No macros are defined (a macro `VEC` would clobber a
  `constexpr int VEC = {{ VEC }};` in the template), except those a `{# pragma-ncu defines:
  A B #}` comment names (the source moves turn a plain .cu with `#define` knobs into a template
  and keep passing its knobs as -D: see `pragma_ncu.coder.moves`);
- C++ template parameters (`[kernel] template_args`): the kernel `NAME<A, B>` is instantiated by
  taking its address at the end of the file, which needs no knowledge of its signature. These
  names are not macros either (`template <int VEC>` would not survive `-DVEC=4`).
Launch and compile parameters need no text change: they live in launch expressions and flags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import meta
from jinja2.sandbox import SandboxedEnvironment, SecurityError

from pragma_ncu.infra.errors import TemplateError
from pragma_ncu.spec import expr
from pragma_ncu.spec.model import ParamValue, TaskSpec

INSTANCE_MARK = "// pragma-ncu: instantiate the template at this point"
DEFINES_MARK = "{# pragma-ncu defines: "  # a jinja2 comment: it renders to nothing
_DEFINES = re.compile(r"\{# pragma-ncu defines: ([\w ]*?) ?#\}")


@dataclass(frozen=True)
class Instance:
    """The source nvcc compiles for one point; `rendered` when it differs from the file."""

    text: str
    rendered: bool


def cxx_literal(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def macro_params(spec: TaskSpec, values: dict[str, ParamValue],
                 text: str | None = None) -> dict[str, ParamValue]:
    """The parameters passed to nvcc as `-DNAME=value`: all but C++ template arguments for a
    plain source; for a jinja2 template (its `text`), those its defines comment names."""
    if spec.is_jinja:
        named = template_defines(text) if text is not None else ()
        return {k: v for k, v in values.items() if k in named}
    return {k: v for k, v in values.items() if k not in spec.template_args}


def template_defines(text: str) -> tuple[str, ...]:
    """The parameters a template's `{# pragma-ncu defines: A B #}` comment names."""
    found = _DEFINES.search(text)
    return tuple(found.group(1).split()) if found else ()


def defines_comment(names: tuple[str, ...] | list[str]) -> str:
    """The comment that makes `macro_params` pass `names` as -D for a template."""
    return f"{DEFINES_MARK}{' '.join(names)} #}}"


def define_value(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


MAX_REPEAT = 1 << 20  # items a template's `*` may repeat a string or list into


class _Sandbox(SandboxedEnvironment):
    """Kernel templates (the user's, and an LLM's rewrites) render in jinja2's sandbox (no
    reach into Python's internals, range() bounded), with `**` bounded as a spec's
    expressions are and `*` repeating a string or list at most MAX_REPEAT items: a template
    cannot run code, and its arithmetic cannot take long."""

    intercepted_binops = frozenset({"**", "*"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**":
            return expr.power(left, right, f"{left!r} ** {right!r}")
        if operator == "*":
            sized = [v for v in (left, right) if isinstance(v, (str, list, tuple))]
            count = [v for v in (left, right) if isinstance(v, int)]
            if sized and count and len(sized[0]) * count[0] > MAX_REPEAT:
                raise SecurityError(f"* repeats {len(sized[0])} items {count[0]} times "
                                    f"(at most {MAX_REPEAT} in all)")
        return super().call_binop(context, operator, left, right)


def render_jinja(text: str, values: dict[str, ParamValue], name: str) -> str:
    env = _Sandbox(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                   autoescape=False)
    try:
        return env.from_string(text).render(**values)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"{name}:{exc.lineno}: template syntax error: {exc.message}") from None
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"{name}: {exc.message} (declare it in [params])") from None
    except Exception as exc:  # anything a template's own expressions raise
        raise TemplateError(f"{name}: rendering failed: {exc!r}") from None


def jinja_variables(text: str, name: str) -> set[str]:
    """The variables a jinja2 template reads from outside (its parameters)."""
    env = jinja2.Environment(autoescape=False)
    try:
        tree = env.parse(text)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"{name}:{exc.lineno}: template syntax error: {exc.message}") from None
    # find_undeclared_variables reports a name `{% set %}` inside an {% if %} as undeclared
    # even where it is only read inside the same branch: names the template stores are its own.
    stored = {n.name for n in tree.find_all(jinja2.nodes.Name) if n.ctx in ("store", "param")}
    return set(meta.find_undeclared_variables(tree)) - set(env.globals) - stored


def check_jinja_template_args(text: str, template_args: tuple[str, ...], name: str) -> None:
    """A jinja2 template whose kernel is a C++ template: none of the template arguments may be
    a jinja2 variable too (it would be written into the text and instantiated as well)."""
    both = sorted(set(template_args) & jinja_variables(text, name))
    if both:
        raise TemplateError(f"{name}: {', '.join(both)} both a jinja2 variable of the template "
                            "and a C++ template argument ([kernel] template_args): make each "
                            "one or the other")


def instantiation(kernel_name: str, template_args: tuple[str, ...],
                  values: dict[str, ParamValue]) -> str:
    """The line that makes nvcc emit `kernel_name<...>` for these values."""
    args = ", ".join(cxx_literal(values[a]) for a in template_args)
    return (f"\n{INSTANCE_MARK}\nstatic void* const pragma_ncu_instance_ = "
            f"reinterpret_cast<void*>(&{kernel_name}<{args}>);\n")


def instantiate(spec: TaskSpec, params: dict[str, ParamValue], text: str) -> Instance:
    """`text` (the kernel file's content) made concrete for `params` (defaults elsewhere): a
    jinja2 template rendered, then a C++ function template instantiated (a jinja2 template
    may hold one, whose template arguments are then none of its jinja2 variables)."""
    values = {**spec.default_params(), **params}
    out, rendered = text, False
    if spec.is_jinja:
        if spec.template_args:
            check_jinja_template_args(text, spec.template_args, str(spec.source_path))
        out, rendered = render_jinja(text, values, str(spec.source_path)), True
    if spec.template_args:
        out = out + instantiation(spec.kernel_name, spec.template_args, values)
    return Instance(out, rendered)


def standalone(spec: TaskSpec, params: dict[str, ParamValue], text: str) -> str:
    """A self-contained .cu of the instance: the parameters as #defines, then the source."""
    values = {**spec.default_params(), **params}
    inst = instantiate(spec, values, text)
    flags = " ".join(spec.compile_flags(values))
    lines = [f"// {spec.kernel_name} instantiated by pragma-ncu from {spec.source_path.name}",
             f"// nvcc flags: {flags or '(none)'}",
             f"// launch: grid {list(spec.launch.grid)}, block {list(spec.launch.block)}, "
             f"dynamic shared memory {spec.launch.shared_mem}"]
    lines += ["// parameters: " + ", ".join(f"{k}={cxx_literal(v)}" for k, v in
                                             sorted(values.items()))]
    lines += [f"#define {k} {define_value(v)}"
              for k, v in sorted(macro_params(spec, values, text).items())]
    return "\n".join(lines) + "\n" + inst.text
