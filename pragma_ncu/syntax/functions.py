"""A source's functions as nodes: their names, declarators, bodies and parameters, and the
functions of the same file a function calls."""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.syntax.tree import Node, call_names, text, walk


def function_name(node: Node) -> str:
    """The name a function_definition defines ("" for operators and qualified names)."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    return text(name) if name is not None and name.type == "identifier" else ""


def functions(root: Node) -> list[Node]:
    return [n for n in walk(root) if n.type == "function_definition"]


def function_named(root: Node, name: str) -> list[Node]:
    return [f for f in functions(root) if function_name(f) == name]


def declarator_of(fn: Node) -> Node:
    """The function_declarator of a function_definition."""
    node = fn.child_by_field_name("declarator")
    while node.type != "function_declarator":
        node = node.child_by_field_name("declarator")
    return node


def body(fn: Node) -> Node:
    return fn.child_by_field_name("body")


def callees(root: Node, fn: Node, depth: int = 3) -> list[Node]:
    """The functions of this file that `fn` calls, directly or through others (to `depth`)."""
    by_name: dict[str, list[Node]] = {}
    for f in functions(root):
        by_name.setdefault(function_name(f), []).append(f)
    seen: list[Node] = []
    frontier = [fn]
    for _ in range(depth):
        nxt = []
        for f in frontier:
            for name in call_names(body(f)):
                for g in by_name.get(name, ()):
                    if g != fn and g not in seen:
                        seen.append(g)
                        nxt.append(g)
        frontier = nxt
    return seen


@dataclass(frozen=True)
class PointerParam:
    index: int  # position in the parameter list (the spec's args are in the same order)
    name: str
    node: Node  # the parameter_declaration
    const_target: bool  # `const T*`
    restrict: bool  # `T* __restrict__`


def parameters(fn: Node) -> list[Node]:
    plist = declarator_of(fn).child_by_field_name("parameters")
    return [c for c in plist.named_children if c.type.endswith("parameter_declaration")]


def pointer_params(fn: Node) -> list[PointerParam]:
    out = []
    for i, p in enumerate(parameters(fn)):
        declarator = p.child_by_field_name("declarator")
        if declarator is None or declarator.type != "pointer_declarator":
            continue
        inner = declarator.child_by_field_name("declarator")
        if inner is None or inner.type != "identifier":
            continue  # a pointer to pointer, or a parameter without a name
        quals = {text(c) for c in p.children if c.type == "type_qualifier"}
        ptr_quals = {text(c) for c in declarator.children if c.type == "type_qualifier"}
        out.append(PointerParam(i, text(inner), p, "const" in quals,
                                bool(ptr_quals & {"__restrict__", "__restrict", "restrict"})))
    return out


def reached(root: Node, fn: Node) -> tuple[Node, ...]:
    """`fn` and the functions of its file that it calls: the code that runs."""
    return (fn, *callees(root, fn))


def definition_start(fn: Node) -> int:
    """The byte offset of the start of the line of the outermost node a function's definition
    stands in (an `extern "C"`, a block of them, a template declaration): where a declaration
    the function needs may be written before it."""
    node = fn
    while node.parent is not None:
        parent = node.parent
        if parent.type == "declaration_list" and parent.parent is not None and \
                parent.parent.type == "linkage_specification":
            parent = parent.parent
        if parent.type not in ("linkage_specification", "template_declaration"):
            break
        node = parent
    return int(node.start_byte - node.start_point[1])
