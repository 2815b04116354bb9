"""Reading an LLM coder's reply: its code block, its spec overlay, and the static checks that can
refuse it before anything is compiled.

The contract the system prompt states: exactly one fenced code block (```cuda, ```cpp, ```c++,
or ```jinja for a jinja2 template) holding the whole kernel file, one fenced ```toml block with
`[params]` (each knob a `{ default, values }` table) and optionally `[launch]`, `[tune]
restrictions` and `[kernel] template_args`, then a sentence or two of rationale. Every way a
reply breaks it raises `ReplyError` with a message precise enough to send back to the model.
What a kernel's definition looks like is the target's to say (its `SpecRules`: a `__global__`
function for CUDA, a function with C linkage for C/C++), and the coder's prompt says the same.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pragma_ncu.infra.errors import ExpressionError, SpecError, TemplateError
from pragma_ncu.spec import expr, template
from pragma_ncu.spec import file as specfile
from pragma_ncu.spec.model import rules_of
from pragma_ncu.targets.rules import SpecRules

CODE_LANGS = {"cuda": False, "cu": False, "cpp": False, "c++": False, "c": False, "jinja": True,
              "jinja2": True}  # fence label -> is a jinja2 template
OVERLAY_KEYS = {"params": None, "launch": {"grid", "block", "shared_mem"},
                "tune": {"restrictions"}, "kernel": {"template_args"}}
WHERE = "the ```toml block"  # how the spec validator's messages name the reply's overlay

# A fence opens at the start of a line with ``` and a label, and closes at the next line that is
# only ``` (models indent fences inside lists now and then, hence the leading blanks).
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$",
                    re.DOTALL | re.MULTILINE)
_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.DOTALL)
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.MULTILINE)
_EXTERN_C = re.compile(r'\bextern\s*"C"')
_AFTER_PARAMS = re.compile(r"(?:\s|\bconst\b|\bnoexcept\b|\bthrow\s*\(\s*\)|"
                           r"__attribute__\s*\(\(.*?\)\))*\{", re.DOTALL)
_UNDEFINED = re.compile(r'identifier "(_*[A-Z][A-Z0-9_]*)" is undefined'  # nvcc
                        r"|'(_*[A-Z][A-Z0-9_]*)' (?:was not declared in this scope|undeclared)"
                        r"|use of undeclared identifier '(_*[A-Z][A-Z0-9_]*)'")  # gcc, clang


class ReplyError(ValueError):
    """The reply breaks the contract; the message says what is wrong, for the model to fix."""


def _validated(check: Any, *args: Any) -> Any:
    """`check(*args, WHERE)`, one of the spec validator's own checks (`spec.file`): a reply's
    tables obey the rules of a user's spec, with the same messages."""
    try:
        return check(*args, WHERE)
    except SpecError as exc:
        raise ReplyError(str(exc)) from None


@dataclass(frozen=True)
class ParsedReply:
    """A reply that passed the static checks.

    `overlay` holds the spec tables of the variant: `params`, `launch` (only when the reply gave
    one), and always `kernel.template_args` and `tune.restrictions` (empty when not given), so
    the user's own template arguments and restrictions, written for other knobs, do not carry
    over to a rewrite.
    """

    code: str
    is_jinja: bool
    overlay: dict[str, Any]
    rationale: str


@dataclass(frozen=True)
class _Block:
    lang: str
    body: str
    start: int
    end: int


@dataclass(frozen=True)
class _Kernel:
    """A function the code defines that may be the kernel (a `__global__` one, or for a
    target without a keyword any at file scope)."""

    params_text: str  # between the parentheses
    template_params: tuple[str, ...] | None  # None: not a function template
    c_linkage: bool = True  # extern "C" (or a C file)


def parse_reply(text: str, kernel_name: str, *, spec: Mapping[str, Any] | None = None,
                source: str = "kernel.cu") -> ParsedReply:
    """Split and check a reply. `spec` (the user's parsed spec, optional) enables the checks that
    need it: the argument count, and the names that launch expressions and restrictions use.
    `source` is the kernel file's name: its target says what a kernel's definition looks like
    (a `.cu` file's is a `__global__` function, a `.cpp` file's an extern "C" one)."""
    code_block, toml_block = _split_blocks(text)
    is_jinja = CODE_LANGS[code_block.lang]
    overlay = _parse_overlay(toml_block.body)
    code = code_block.body
    plain = source.removesuffix(".j2")
    kind = _KernelKind(rules_of(Path(plain)), Path(plain).suffix.lower() == ".c")
    _check_kernel(code, is_jinja, kernel_name, overlay, spec or {}, kind)
    _check_param_use(code, is_jinja, overlay, spec or {})
    return ParsedReply(code, is_jinja, overlay, _rationale(text, code_block, toml_block))


def explain_check_error(text: str, is_jinja: bool) -> str:
    """The build check's error text, headed by a plain reading of nvcc's `identifier "TILE" is
    undefined` for ALL-CAPS names (a knob the reply forgot to declare, or to write as a jinja2
    variable)."""
    names = list(dict.fromkeys(n for groups in _UNDEFINED.findall(text) for n in groups if n))
    if not names:
        return text
    if is_jinja:
        notes = [f"{n} is used as a C++ name in a jinja2 template, where no macros are defined: "
                 f"declare it in [params] and write {{{{ {n} }}}}, or define it in the code"
                 for n in names]
    else:
        notes = [f"undeclared parameter {n} (declare it in [params] or define it in the code)"
                 for n in names]
    return "\n".join(notes) + "\n\n" + text


def first_sentence(text: str, limit: int = 200) -> str:
    """The first sentence of `text` on one line, at most `limit` characters."""
    flat = " ".join(text.split())
    sentence = re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[:limit - 3].rstrip() + "..."


# --- blocks --------------------------------------------------------------------------------

def _split_blocks(text: str) -> tuple[_Block, _Block]:
    blocks = [_Block(m.group(1).lower(), m.group(2), m.start(), m.end())
              for m in _FENCE.finditer(text)]
    code = [b for b in blocks if b.lang in CODE_LANGS]
    toml = [b for b in blocks if b.lang == "toml"]
    other = [b for b in blocks if b not in code and b not in toml]
    if other:
        label = other[0].lang or "(no label)"
        raise ReplyError(f"a fenced block is labeled {label!r}: label the kernel's block "
                         "```cuda (or ```jinja for a jinja2 template) and the spec's ```toml")
    if not code:
        raise ReplyError("the reply has no code block: put the whole kernel file in one fenced "
                         "```cuda block (or ```jinja for a jinja2 template)")
    if len(code) > 1:
        raise ReplyError(f"the reply has {len(code)} code blocks: put the whole kernel file "
                         "in exactly one fenced ```cuda (or ```jinja) block")
    if not toml:
        raise ReplyError("the reply has no ```toml block: declare the parameters in one fenced "
                         "```toml block with a [params] table")
    if len(toml) > 1:
        raise ReplyError(f"the reply has {len(toml)} ```toml blocks: put [params] and any "
                         "[launch], [tune], [kernel] tables in exactly one")
    return code[0], toml[0]


def _rationale(text: str, code: _Block, toml: _Block) -> str:
    """The prose after the last block, or else before the first."""
    first, last = min(code.start, toml.start), max(code.end, toml.end)
    after, before = text[last:].strip(), text[:first].strip()
    return after or before


# --- the overlay ---------------------------------------------------------------------------

def _parse_overlay(body: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(body)
    except tomllib.TOMLDecodeError as exc:
        raise ReplyError(f"the ```toml block does not parse: {exc}") from None
    for table, value in data.items():
        if table not in OVERLAY_KEYS:
            raise ReplyError(f"the ```toml block may only hold [params], [launch], [tune] and "
                             f"[kernel]; it has [{table}] (the spec's other tables are fixed)")
        if not isinstance(value, dict):
            raise ReplyError(f"'{table}' in the ```toml block must be a table [{table}]")
        allowed = OVERLAY_KEYS[table]
        extra = sorted(set(value) - allowed) if allowed is not None else []
        if extra:
            raise ReplyError(f"[{table}] may only set {', '.join(sorted(allowed or ()))}; "
                             f"it sets '{extra[0]}'")
    if "params" not in data:
        raise ReplyError("the ```toml block declares no [params] table")
    _check_params(data["params"])
    if "launch" in data:
        _validated(specfile.parse_launch, data["launch"])
    tune = dict(data.get("tune") or {})
    kernel = dict(data.get("kernel") or {})
    tune["restrictions"] = _validated(specfile.str_list, tune.get("restrictions", []),
                                      "tune.restrictions")
    kernel["template_args"] = _validated(specfile.str_list, kernel.get("template_args", []),
                                         "kernel.template_args")
    for i, restriction in enumerate(tune["restrictions"]):
        _validated(specfile.expr_text, restriction, f"tune.restrictions[{i}]")
    overlay = {"params": data["params"], "kernel": kernel, "tune": tune}
    if "launch" in data:
        overlay["launch"] = data["launch"]
    return overlay


def _check_params(params: dict[str, Any]) -> None:
    """The spec's rules for [params], and the contract's own: every knob of a reply is a
    table with candidate values, its default among them."""
    if not params:
        raise ReplyError("[params] is empty: declare at least one tunable parameter")
    for name, value in params.items():
        where = f"params.{name}"
        if not isinstance(value, dict):
            raise ReplyError(f"{where} must be a table {{ default = ..., values = [...] }}, "
                             f"got {value!r}")
        if "default" not in value or "values" not in value:
            missing = "default" if "default" not in value else "values"
            raise ReplyError(f"{where} has no '{missing}': give both default and values")
    for param in _validated(specfile.parse_params, params):
        if not param.values:
            raise ReplyError(f"params.{param.name}.values must be a non-empty list")
        if (type(param.default), param.default) not in [(type(v), v) for v in param.values]:
            raise ReplyError(f"params.{param.name}: default {param.default!r} is not among "
                             f"values {list(param.values)!r}")


# --- the code ------------------------------------------------------------------------------

def _strip_comments(code: str, is_jinja: bool) -> str:
    code = _JINJA_COMMENT.sub(" ", code) if is_jinja else code
    return _C_COMMENT.sub(" ", code)


@dataclass(frozen=True)
class _KernelKind:
    """What a kernel's definition looks like for the source's target; `c_file`: a C source,
    whose functions all have C linkage."""

    rules: SpecRules
    c_file: bool = False


def _kernels(code: str, kind: _KernelKind) -> dict[str, _Kernel]:
    """The functions of comment-free `code` that may be the kernel, by name: those after the
    target's keyword, or every function defined at file scope where it has none."""
    keyword = kind.rules.kernel_keyword
    return _marked(code, keyword) if keyword else _file_scope(code, kind.c_file)


def _marked(code: str, keyword: str) -> dict[str, _Kernel]:
    """The functions `keyword` (`__global__`) marks, by name. After it, the first `name(` that
    is not an attribute (`__launch_bounds__(...)` and other `__x__(...)`, whose parentheses
    are skipped) is the function."""
    found: dict[str, _Kernel] = {}
    for m in re.finditer(rf"\b{re.escape(keyword)}\b", code):
        pos = m.end()
        while (call := _CALL.search(code, pos)) is not None:
            if ";" in code[pos:call.start()]:
                break  # not a function declaration this scan understands
            close = _matching_paren(code, call.end() - 1)
            if call.group(1).startswith("__") or call.group(1) == "alignas":
                pos = close + 1
                continue
            found.setdefault(call.group(1), _Kernel(code[call.end():close],
                                                    _template_params(code[:m.start()])))
            break
    return found


def _file_scope(code: str, c_file: bool) -> dict[str, _Kernel]:
    """The functions defined at file scope (or in a namespace or an extern "C" block), by
    name: a `name(...)` whose parentheses a body follows; preprocessor lines aside. Each
    says whether it has C linkage: in a C file, in an extern "C" block, or declared so."""
    code = _PREPROCESSOR.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    blocks = _blocks(code)
    found: dict[str, _Kernel] = {}
    for call in _CALL.finditer(code):
        scope = [kind for start, end, kind in blocks if start < call.start() < end]
        if any(kind == "other" for kind in scope):
            continue  # inside a function or a class: a call, not a definition
        close = _matching_paren(code, call.end() - 1)
        if not _AFTER_PARAMS.match(code, close + 1):
            continue  # a declaration, a macro's use, an initializer
        head = code[max(code.rfind(c, 0, call.start()) for c in ";{}") + 1:call.start()]
        c_linkage = c_file or "extern_c" in scope or bool(_EXTERN_C.search(head))
        found.setdefault(call.group(1), _Kernel(code[call.end():close],
                                                _template_params(head), c_linkage))
    return found


def _blocks(code: str) -> list[tuple[int, int, str]]:
    """Every {...} of `code` as (open, close, kind): "extern_c" (extern "C" {), "namespace",
    or "other" (a body, an initializer)."""
    out, stack = [], []
    for i, ch in enumerate(code):
        if ch == "{":
            before = code[max(code.rfind(c, 0, i) for c in ";{}") + 1:i]
            kind = ("extern_c" if _EXTERN_C.search(before) and "(" not in before
                    else "namespace" if re.search(r"\bnamespace\b", before) else "other")
            stack.append((i, kind))
        elif ch == "}" and stack:
            start, kind = stack.pop()
            out.append((start, i, kind))
    out += [(start, len(code), kind) for start, kind in stack]
    return out


def _matching_paren(code: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(code)):
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        if depth == 0:
            return i
    return len(code)


def _template_params(before: str) -> tuple[str, ...] | None:
    """The template parameter names when `before` ends in `template <...>` (plus specifiers)."""
    m = re.search(r"template\s*<([^;{}]*)>\s*(?:(?:static|inline|__inline__|__forceinline__)"
                  r"\s+)*$", before)
    if m is None:
        return None
    names = []
    for part in _top_level_split(m.group(1)):
        decl = part.split("=")[0].strip()
        ident = re.findall(r"[A-Za-z_]\w*", decl)
        names.append(ident[-1] if ident else decl)
    return tuple(names)


def _top_level_split(text: str) -> list[str]:
    """`text` split at commas outside (), <>, [] and {}; empty for blank text or `void`."""
    if text.strip() in ("", "void"):
        return []
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += 1 if ch in "(<[{" else -1 if ch in ")>]}" else 0
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _check_kernel(code: str, is_jinja: bool, kernel_name: str, overlay: dict[str, Any],
                  spec: Mapping[str, Any], kind: _KernelKind) -> None:
    """The kernel is defined under its name as the target's kernels are (a `__global__`
    function, one with C linkage), with the spec's argument count, as a function template
    exactly when the overlay gives template arguments."""
    params = overlay["params"]
    if not is_jinja and ("{%" in code or any(re.search(r"\{\{\s*" + re.escape(n) + r"\b", code)
                                             for n in params)):
        raise ReplyError("the code uses jinja2 syntax ({{ ... }} or {% ... %}) but its block is "
                         "labeled as CUDA: label it ```jinja")
    kernels = _kernels(_strip_comments(code, is_jinja), kind)
    if kernel_name not in kernels:
        defined = ", ".join(sorted(kernels)) or "none"
        found = f"{kind.rules.kernel_keyword} functions".strip()
        raise ReplyError(f"the code defines no {kind.rules.kernel_words} named {kernel_name} "
                         f"({found} found: {defined}); keep the kernel's name")
    kernel = kernels[kernel_name]
    if not kernel.c_linkage:
        raise ReplyError(f'{kernel_name} has C++ linkage: declare it extern "C" (the worker '
                         "finds it by its C name), and keep its name and arguments")
    args = spec.get("args") or []
    if args and "{%" not in kernel.params_text:
        count = len(_top_level_split(kernel.params_text))
        if count != len(args):
            names = ", ".join(str(a.get("name")) for a in args if isinstance(a, dict))
            raise ReplyError(f"{kernel_name} takes {count} argument(s) but the spec passes "
                             f"{len(args)} ({names}): keep the argument list")
    _check_template_args(kernel_name, kernel, code if is_jinja else None, overlay)


def _check_template_args(kernel_name: str, kernel: _Kernel, template: str | None,
                         overlay: dict[str, Any]) -> None:
    """The template arguments fit the kernel; of a jinja2 `template`, none is a variable."""
    targs = overlay["kernel"]["template_args"]
    _validated(specfile.check_template_args, set(overlay["params"]), targs)
    both = sorted(set(targs) & _jinja_variables(template)) if template else []
    if both:
        raise ReplyError(f"{', '.join(both)}: both a jinja2 variable and a C++ template "
                         "argument ([kernel] template_args); make each one or the other")
    if kernel.template_params is None and targs:
        raise ReplyError(f"[kernel] template_args is set but {kernel_name} is not a function "
                         "template: drop template_args or make the kernel a template")
    if kernel.template_params is not None and not targs:
        raise ReplyError(f"{kernel_name} is a C++ function template: list the parameters for "
                         "its template arguments, in order, in [kernel] template_args")
    if kernel.template_params is not None and len(targs) > len(kernel.template_params):
        raise ReplyError(f"[kernel] template_args has {len(targs)} names but {kernel_name} "
                         f"has {len(kernel.template_params)} template parameter(s)")


def _jinja_variables(code: str) -> set[str]:
    try:
        return template.jinja_variables(code, "reply")
    except TemplateError as exc:  # "reply:LINE: template syntax error: ..."
        raise ReplyError(f"the jinja2 template does not parse: {exc}") from None


def _macro_uses(code: str, name: str) -> bool:
    """Whether a #define knob appears in `code` beyond its own #ifndef/#define/#endif guard."""
    guard = re.compile(r"^[ \t]*#[ \t]*(?:ifndef|define|undef)[ \t]+" + re.escape(name) + r"\b"
                       r".*$|^[ \t]*#[ \t]*if[ \t]+!\s*defined\s*\(?\s*" + re.escape(name)
                       + r"\b.*$", re.MULTILINE)
    return re.search(r"\b" + re.escape(name) + r"\b", guard.sub("", code)) is not None


def _check_macro_guards(code: str, params: Mapping[str, Any], template_args: list[str]) -> None:
    for name in params:
        if name in template_args:
            continue
        defined = re.search(r"^[ \t]*#[ \t]*define[ \t]+" + re.escape(name) + r"\b", code,
                            re.MULTILINE)
        guarded = re.search(r"^[ \t]*#[ \t]*(?:ifndef[ \t]+" + re.escape(name) + r"\b|if[ \t]+!"
                            r"\s*defined\s*\(?\s*" + re.escape(name) + r"\b)", code, re.MULTILINE)
        if defined and not guarded:
            raise ReplyError(f"{name} is #defined in the code without an #ifndef {name} guard, "
                             f"so -D{name}=... cannot set it: wrap the #define in #ifndef {name} "
                             "/ #endif")


def _check_param_use(code: str, is_jinja: bool, overlay: dict[str, Any],
                     spec: Mapping[str, Any]) -> None:
    """Every name the code or an expression needs is declared, and every declared parameter
    has an effect: in the code, in a launch expression, as a template argument or a flag."""
    params: dict[str, Any] = overlay["params"]
    targs = overlay["kernel"]["template_args"]
    bare = _strip_comments(code, is_jinja)
    if is_jinja:
        variables = _jinja_variables(code)
        undeclared = sorted(variables - set(params))
        if undeclared:
            raise ReplyError(f"undeclared parameter(s): {', '.join(undeclared)} (the jinja2 "
                             "template uses them; declare each in [params])")
        in_code = variables
    else:
        _check_macro_guards(bare, params, targs)
        in_code = {n for n in params if _macro_uses(bare, n)}
    launch = overlay.get("launch") or spec.get("launch") or {}
    in_launch = _launch_names(launch, params, spec, "launch" in overlay)
    _check_restriction_names(overlay["tune"]["restrictions"], params, spec)
    flags = {n for n, v in params.items() if v.get("flag")}
    unused = sorted(set(params) - in_code - in_launch - flags - set(targs))
    if unused:
        raise ReplyError(f"declared but unused: {', '.join(unused)} (every parameter must "
                         "appear in the code or in a [launch] expression, or be a flag param)")


def _dims(spec: Mapping[str, Any]) -> set[str] | None:
    shapes = spec.get("shapes")
    if not isinstance(shapes, list) or not shapes:
        return None  # unknown: names cannot be checked
    return {k for s in shapes if isinstance(s, dict) for k in s if k != "name"}


def _launch_names(launch: Mapping[str, Any], params: Mapping[str, Any],
                  spec: Mapping[str, Any], own: bool) -> set[str]:
    """The names the effective launch expressions use; those that are neither parameters nor
    dims are refused (when the spec's dims are known)."""
    names: set[str] = set()
    for value in launch.values():
        for item in value if isinstance(value, list) else [value]:
            try:
                names |= expr.names(str(item))
            except ExpressionError:
                continue  # the spec's own launch: its parser reports it
    dims = _dims(spec)
    stray = sorted(names - set(params) - (dims or set())) if dims is not None else []
    if stray and own:
        raise ReplyError(f"[launch] uses {', '.join(stray)}, which is neither a declared "
                         f"parameter nor a shape dim (dims: {', '.join(sorted(dims or ()))})")
    if stray:
        raise ReplyError(f"the spec's [launch] uses {', '.join(stray)}, which your [params] "
                         "does not declare: declare it, or give a [launch] table")
    return names


def _check_restriction_names(restrictions: list[str], params: Mapping[str, Any],
                             spec: Mapping[str, Any]) -> None:
    dims = _dims(spec)
    if dims is None:
        return
    for i, text in enumerate(restrictions):
        stray = sorted(expr.names(text) - set(params) - dims)
        if stray:
            raise ReplyError(f"[tune] restrictions[{i}] uses {', '.join(stray)}, which is "
                             "neither a declared parameter nor a shape dim")
