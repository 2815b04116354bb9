"""What a C, C++ or CUDA source says about its functions, read with tree-sitter (`tree`).

Only facts are collected here (functions, their parameters as written, template parameters,
`#ifndef` knobs, object-like macros, typedefs, structs); what they mean for a spec is decided in
`pragma_ncu.draft.infer`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pragma_ncu.syntax.tree import Node, line_of, node_text, strip_comments, syntax_tree, walk

_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class CParam:
    """One function parameter as written: `const float* __restrict__ x` is name "x", type
    "float", one pointer level, pointee const."""

    name: str
    type_name: str  # the base type, qualifiers dropped: "float", "unsigned long long", "T"
    pointers: int  # levels of indirection; an array parameter (float x[]) counts as one
    const_target: bool  # the pointee (or, for a value, the value) is const
    reference: bool  # declared as a C++ reference (T& x)
    text: str  # the declaration as written
    line: int


@dataclass(frozen=True)
class TemplateParam:
    """`typename T = float` is ("T", "type", None, "float"); `int VEC` is ("VEC", "value",
    "int", None)."""

    name: str
    kind: str  # "type", "value", or "other" (a pack or a template template parameter)
    type_name: str | None
    default: str | None


@dataclass(frozen=True)
class CFunction:
    """A function definition (one with a body)."""

    name: str
    params: tuple[CParam, ...]
    template: tuple[TemplateParam, ...] | None  # None: not a template
    is_global: bool  # CUDA __global__
    c_linkage: bool  # inside extern "C" (or a .c file)
    internal: bool  # static, inline or in an anonymous namespace: not callable from outside
    returns_void: bool
    line: int
    launch_bounds: str | None  # the first argument of __launch_bounds__(...), as written
    body: Node = field(compare=False, repr=False, default=None)


@dataclass(frozen=True)
class Knob:
    """`#ifndef NAME` / `#define NAME value` (or `#if !defined(NAME)`): a parameter the file
    lets the compiler command line set."""

    name: str
    value: str  # the default as written, comments dropped
    line: int


@dataclass(frozen=True)
class SourceFacts:
    functions: tuple[CFunction, ...]
    knobs: tuple[Knob, ...]
    macros: tuple[tuple[str, str], ...]  # object-like #defines: (name, value)
    aliases: tuple[tuple[str, str], ...]  # typedef / using: (name, type as written)
    structs: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # (name, ((type, count), ...))
    identifiers: frozenset[str]  # every name the code uses (comments and strings excluded)
    openmp: bool  # the file has `#pragma omp` lines
    # Where a name is declared (a variable, parameter, function, field, type), named as a
    # member (`threadIdx.x`) or called: (name, line), in source order. A -DNAME=value macro of
    # that name would break each of these, where a plain use reads the macro's value.
    declared: tuple[tuple[str, int], ...] = ()

    def declared_at(self, name: str) -> int | None:
        """The first line that declares `name`, names it as a member or calls it, else None."""
        return next((line for n, line in self.declared if n == name), None)

    def macro(self, name: str) -> str | None:
        return dict(self.macros).get(name)

    def named(self, name: str) -> tuple[CFunction, ...]:
        return tuple(f for f in self.functions if f.name == name)


def parse_source(text: str, language: str = "cuda") -> SourceFacts:
    """The functions, knobs, macros, type aliases and structs of one source file."""
    root = syntax_tree(text, language)
    functions: list[CFunction] = []
    _collect_functions(root, functions, c_linkage=language == "c", internal=False,
                       template=None)
    return SourceFacts(
        functions=tuple(functions), knobs=tuple(_knobs(root)), macros=tuple(_macros(root)),
        aliases=tuple(_aliases(root)), structs=tuple(_structs(root)),
        identifiers=frozenset(_identifiers(root)), declared=tuple(_declared(root)),
        openmp=any(node_text(n.child_by_field_name("argument")).startswith("omp")
                   for n in walk(root) if n.type == "preproc_call"
                   and node_text(n.child_by_field_name("directive")) == "#pragma"),
    )


# --- functions ------------------------------------------------------------------------------
_CONTAINERS = {"translation_unit", "declaration_list", "preproc_if", "preproc_ifdef",
               "preproc_else", "preproc_elif", "preproc_elifdef"}


def _collect_functions(node: Node, out: list[CFunction], *, c_linkage: bool, internal: bool,
                       template: tuple[TemplateParam, ...] | None) -> None:
    for child in node.children:
        kind = child.type
        if kind == "function_definition":
            fn = _function(child, c_linkage, internal, template)
            if fn is not None:
                out.append(fn)
        elif kind == "linkage_specification":
            c = node_text(child.child_by_field_name("value")).strip('"') == "C"
            body = child.child_by_field_name("body")
            if body is not None and body.type == "function_definition":
                fn = _function(body, c or c_linkage, internal, template)
                if fn is not None:
                    out.append(fn)
            elif body is not None:
                _collect_functions(body, out, c_linkage=c or c_linkage, internal=internal,
                                   template=None)
        elif kind == "namespace_definition":
            anonymous = child.child_by_field_name("name") is None
            body = child.child_by_field_name("body")
            if body is not None:
                _collect_functions(body, out, c_linkage=c_linkage,
                                   internal=internal or anonymous, template=None)
        elif kind == "template_declaration":
            params = _template_params(child.child_by_field_name("parameters"))
            _collect_functions(child, out, c_linkage=c_linkage, internal=internal,
                               template=params)
        elif kind in _CONTAINERS:
            _collect_functions(child, out, c_linkage=c_linkage, internal=internal,
                               template=None)


def _function(node: Node, c_linkage: bool, internal: bool,
              template: tuple[TemplateParam, ...] | None) -> CFunction | None:
    declarator = node.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return None  # returns a pointer or a reference: never a kernel, and never read here
    name_node = declarator.child_by_field_name("declarator")
    if name_node is None or name_node.type != "identifier":
        return None  # an out-of-line member, an operator, a qualified name
    tokens = {c.type for c in node.children}
    storage = {node_text(c) for c in node.children if c.type == "storage_class_specifier"}
    bounds = next((c for c in node.children if c.type == "launch_bounds"), None)
    returns = node.child_by_field_name("type")
    return CFunction(
        name=node_text(name_node),
        params=_params(declarator.child_by_field_name("parameters")),
        template=template,
        is_global="__global__" in tokens,
        c_linkage=c_linkage,
        internal=internal or bool(storage & {"static", "inline"}) or "__forceinline__" in tokens,
        returns_void=node_text(returns) == "void",
        line=line_of(node),
        launch_bounds=_first_argument(bounds),
        body=node.child_by_field_name("body"),
    )


def _first_argument(bounds: Node | None) -> str | None:
    if bounds is None:
        return None
    args = [c for c in bounds.named_children]
    return node_text(args[0]) if args else None


def _params(plist: Node | None) -> tuple[CParam, ...]:
    if plist is None:
        return ()
    out = []
    for i, p in enumerate(c for c in plist.named_children
                          if c.type in ("parameter_declaration", "optional_parameter_declaration",
                                        "variadic_parameter_declaration")):
        if p.type == "variadic_parameter_declaration":  # judged if the function is the kernel
            out.append(CParam("...", "...", 0, False, False, node_text(p), line_of(p)))
            continue
        param = _param(p, i)
        if param is not None:
            out.append(param)
    return tuple(out)


def _param(node: Node, index: int) -> CParam | None:
    type_node = node.child_by_field_name("type")
    quals = {node_text(c) for c in node.children if c.type == "type_qualifier"}
    declarator = node.child_by_field_name("declarator")
    pointers, reference, name = _declarator(declarator)
    type_name = type_spelling(type_node)
    if type_name == "void" and pointers == 0 and not name:
        return None  # f(void)
    return CParam(name=name or f"arg{index}", type_name=type_name, pointers=pointers,
                  const_target="const" in quals, reference=reference, text=node_text(node),
                  line=line_of(node))


def _declarator(node: Node | None) -> tuple[int, bool, str]:
    """(pointer levels, is a reference, name) of a parameter's declarator."""
    pointers, reference, name = 0, False, ""
    while node is not None:
        kind = node.type
        if kind in ("pointer_declarator", "abstract_pointer_declarator", "array_declarator",
                    "abstract_array_declarator"):
            pointers += 1  # an array parameter is a pointer
        elif kind in ("reference_declarator", "abstract_reference_declarator"):
            reference = True
        elif kind == "identifier":
            return pointers, reference, node_text(node)
        inner = node.child_by_field_name("declarator")
        if inner is None:  # a reference declarator names its child without a field
            inner = next((c for c in node.named_children if c.type.endswith("declarator")
                          or c.type == "identifier"), None)
        node = inner
    return pointers, reference, name


def type_spelling(node: Node | None) -> str:
    """A type specifier as one canonical spelling: "unsigned long long", "float", "P"."""
    if node is None:
        return ""
    if node.type == "sized_type_specifier":
        words = [node_text(c) for c in node.children]
        return " ".join(w for w in words if w)
    if node.type in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
        return node_text(node.child_by_field_name("name"))
    if node.type == "qualified_identifier":  # std::int32_t -> int32_t
        return node_text(node).split("::")[-1].strip()
    return node_text(node)


def _template_params(plist: Node | None) -> tuple[TemplateParam, ...]:
    out: list[TemplateParam] = []
    for p in (plist.named_children if plist is not None else ()):
        if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
            name = next((node_text(c) for c in p.named_children if c.type == "type_identifier"), "")
            default = p.child_by_field_name("default_type")
            out.append(TemplateParam(name, "type", None, node_text(default) if default else None))
        elif p.type in ("parameter_declaration", "optional_parameter_declaration"):
            _, _, name = _declarator(p.child_by_field_name("declarator"))
            default = p.child_by_field_name("default_value")
            out.append(TemplateParam(name, "value", type_spelling(p.child_by_field_name("type")),
                                     node_text(default) if default else None))
        else:  # a template template parameter or a pack: judged if the function is the kernel
            out.append(TemplateParam(node_text(p), "other", None, None))
    return tuple(out)


# --- preprocessor, typedefs, structs --------------------------------------------------------
def _knobs(root: Node) -> list[Knob]:
    out = []
    for node in walk(root):
        name = _guarded_name(node)
        if name is None:
            continue
        for child in node.named_children:
            if child.type == "preproc_def" and node_text(child.child_by_field_name("name")) == name:
                out.append(Knob(name, strip_comments(node_text(child.child_by_field_name("value"))),
                                line_of(node)))
                break
    return out


def _guarded_name(node: Node) -> str | None:
    """NAME for `#ifndef NAME` and `#if !defined(NAME)` / `#if !defined NAME`."""
    if node.type == "preproc_ifdef" and node.children and node_text(node.children[0]) == "#ifndef":
        return node_text(node.child_by_field_name("name"))
    if node.type == "preproc_if":
        cond = node.child_by_field_name("condition")
        text = re.sub(r"\s+", "", node_text(cond))
        match = re.fullmatch(r"!defined\(?([A-Za-z_]\w*)\)?", text)
        return match.group(1) if match else None
    return None


def _macros(root: Node) -> list[tuple[str, str]]:
    return [(node_text(n.child_by_field_name("name")),
             strip_comments(node_text(n.child_by_field_name("value"))))
            for n in walk(root) if n.type == "preproc_def"]


def _aliases(root: Node) -> list[tuple[str, str]]:
    out = []
    for n in walk(root):
        if n.type == "type_definition":
            declarator = n.child_by_field_name("declarator")
            pointers, _, _ = _declarator(declarator)
            if declarator is not None and declarator.type == "type_identifier" and not pointers:
                out.append((node_text(declarator), type_spelling(n.child_by_field_name("type"))))
        elif n.type == "alias_declaration":
            described = n.child_by_field_name("type")
            inner = described.child_by_field_name("type") if described is not None else None
            if described is not None and described.child_by_field_name("declarator") is None:
                out.append((node_text(n.child_by_field_name("name")), type_spelling(inner)))
    return out


def _structs(root: Node) -> list[tuple[str, tuple[tuple[str, int], ...]]]:
    out = []
    for n in walk(root):
        if n.type not in ("struct_specifier", "class_specifier"):
            continue
        name, body = n.child_by_field_name("name"), n.child_by_field_name("body")
        if name is None or body is None:
            continue
        fields = []
        for f in body.named_children:
            if f.type != "field_declaration":
                continue
            count = 1
            declarator = f.child_by_field_name("declarator")
            while declarator is not None and declarator.type == "array_declarator":
                size = node_text(declarator.child_by_field_name("size"))
                count *= int(size) if size.isdigit() else 0
                declarator = declarator.child_by_field_name("declarator")
            if declarator is not None and declarator.type == "pointer_declarator":
                count = 0  # a pointer member: no element type
            fields.append((type_spelling(f.child_by_field_name("type")), count))
        out.append((node_text(name), tuple(fields)))
    return out


_NAMED_BY = {"enumerator", "struct_specifier", "class_specifier", "union_specifier",
             "enum_specifier", "namespace_definition", "alias_declaration"}


def _declared(root: Node) -> list[tuple[str, int]]:
    """(name, line) of each name declared, named as a member or called (see
    SourceFacts.declared); the preprocessor's lines aside."""
    out = []
    for n in walk(root):
        if n.type not in ("identifier", "field_identifier", "type_identifier"):
            continue
        parent = n.parent
        if parent is None or parent.type.startswith("preproc"):
            continue
        ids = {c.id for c in parent.children_by_field_name("declarator")}
        if parent.type in _NAMED_BY:
            ids |= {c.id for c in parent.children_by_field_name("name")}
        if parent.type == "call_expression":
            ids |= {c.id for c in parent.children_by_field_name("function")}
        if n.type == "field_identifier" or n.id in ids:
            out.append((node_text(n), line_of(n)))
    return out


def _identifiers(root: Node) -> set[str]:
    names: set[str] = set()
    for n in walk(root):
        if n.type in ("identifier", "type_identifier", "field_identifier"):
            names.add(node_text(n))
        elif n.type == "preproc_arg":
            names.update(_IDENT.findall(strip_comments(node_text(n))))
    return names
