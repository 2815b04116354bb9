"""What the moves read off the syntax tree (tree-sitter's CUDA grammar, through
`pragma_ncu.draft.cparse`): the kernel's function, its loops, calls, accesses through its
pointer parameters, and which names vary across a warp's lanes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pragma_ncu.coder.moves.base import Node, Subject
from pragma_ncu.draft.cparse import line_of, node_text, walk

LOOPS = ("for_statement", "while_statement", "do_statement")
_PRAGMA = re.compile(r"#\s*pragma\s+(.*)$")
_PRAGMA_LINE = re.compile(rb"^[ \t]*#[ \t]*pragma\b[^\n]*", re.M)
FUNCTION_SCOPES = ("function_definition", "lambda_expression")
# Calls that make threads wait on or exchange with one another (barriers, shuffles, votes).
SYNCING = ("__syncthreads", "__syncwarp", "__shfl", "__ballot", "__any", "__all", "__activemask",
           "__reduce", "this_thread_block", "tiled_partition", "grid_group", "__match")
# The tree's plain helpers are cparse's, under the names the moves read them by (`walk` too).
text = node_text
first_line = line_of


def last_line(node: Node) -> int:
    return int(node.end_point[0]) + 1


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


def reached(subject: Subject) -> tuple[Node, ...]:
    """The kernel and the functions of its file that it calls: the code that runs."""
    return (subject.kernel, *callees(subject.tree, subject.kernel))


def compact(node: Node) -> str:
    """A node's text with every space and line break taken out (for patterns over code)."""
    return re.sub(r"\s+", "", text(node))


def call_names(node: Node | None) -> list[str]:
    if node is None:
        return []
    return [text(n.child_by_field_name("function")) for n in walk(node)
            if n.type == "call_expression"]


def identifiers(node: Node | None) -> set[str]:
    if node is None:
        return set()
    return {text(n) for n in walk(node) if n.type == "identifier"}


def mentions(node: Node | None, names: set[str] | frozenset[str]) -> bool:
    return node is not None and any(n.type == "identifier" and text(n) in names
                                    for n in walk(node))


def uses_builtin(node: Node, builtin: str) -> bool:
    """`node` reads `builtin` (threadIdx, blockIdx, gridDim, blockDim) in any dimension."""
    return any(n.type == "field_expression" and text(n.child_by_field_name("argument")) == builtin
               for n in walk(node))


def indentation(data: bytes, offset: int) -> str | None:
    """The whitespace before `offset` on its line, or None when code precedes it there."""
    start = data.rfind(b"\n", 0, offset) + 1
    prefix = data[start:offset].decode(errors="replace")
    return prefix if not prefix.strip() else None


def pragma_before(data: bytes, offset: int) -> str:
    """The `#pragma` on the line right above `offset` ("unroll 4"), or ""."""
    start = data.rfind(b"\n", 0, offset) + 1
    if data[start:offset].strip():
        return ""  # code before it on its line
    above = data[data.rfind(b"\n", 0, max(start - 1, 0)) + 1:max(start - 1, 0)].decode(
        errors="replace").strip()
    found = _PRAGMA.match(above)
    return found.group(1).strip() if found else ""


def masked(data: bytes) -> bytes:
    """`data` with its `#pragma` lines blanked (same length, so offsets hold): the grammar
    cannot read a pragma between a loop's header and its body, as in
    `for (...)` / `#pragma unroll` / `for (...)`, which CUDA code often has."""
    return _PRAGMA_LINE.sub(lambda m: b" " * len(m.group(0)), data)


# --- parameters and accesses ----------------------------------------------------------------

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


@dataclass(frozen=True)
class Access:
    """A read or write of memory through a pointer parameter (or a pointer derived from one)."""

    root: str  # the parameter
    node: Node
    store: bool
    load: bool


def derived_pointers(fn_body: Node, params: set[str]) -> dict[str, str]:
    """Local pointers initialized from a parameter (`const float* row = x + r * n;`):
    local name -> the parameter it points into."""
    out: dict[str, str] = {}
    for n in walk(fn_body):
        if n.type != "init_declarator":
            continue
        declarator, value = n.child_by_field_name("declarator"), n.child_by_field_name("value")
        if declarator is None or declarator.type != "pointer_declarator":
            continue
        name = text(declarator.child_by_field_name("declarator"))
        roots = [r for r in (identifiers(value) & (params | set(out)))]
        if len(roots) == 1:
            out[name] = out.get(roots[0], roots[0])
    return out


def accesses(fn_body: Node, params: set[str]) -> list[Access]:
    """Every subscript, dereference and `->` through `params` (or pointers derived from them),
    in source order, as loads, stores or both (`+=`, `++`)."""
    roots = {p: p for p in params} | derived_pointers(fn_body, params)
    out = []
    for n in walk(fn_body):
        base = _access_base(n)
        if base is None or base not in roots:
            continue
        parent = n.parent
        store = False
        load = True
        if parent is not None and parent.type == "assignment_expression" and \
                parent.child_by_field_name("left") == n:
            store = True
            load = text(parent.child_by_field_name("operator")) != "="
        elif parent is not None and parent.type == "update_expression":
            store = True
        out.append(Access(roots[base], n, store, load))
    return out


def _access_base(node: Node) -> str | None:
    if node.type == "subscript_expression":
        arg = node.child_by_field_name("argument")
    elif node.type == "pointer_expression" and text(node.child_by_field_name("operator")) == "*":
        arg = node.child_by_field_name("argument")
        while arg is not None and arg.type in ("parenthesized_expression", "binary_expression"):
            arg = arg.named_children[0] if arg.named_children else None
    elif node.type == "field_expression" and text(node.child_by_field_name("operator")) == "->":
        arg = node.child_by_field_name("argument")
    else:
        return None
    return text(arg) if arg is not None and arg.type == "identifier" else None


def declarators(decl: Node) -> list[tuple[str, Node]]:
    """The names a declaration declares, each with its declarator."""
    out = []
    for d in decl.children_by_field_name("declarator"):
        inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        while inner is not None and inner.type != "identifier":
            inner = inner.child_by_field_name("declarator")
        if inner is not None:
            out.append((text(inner), d))
    return out


def assigned(node: Node) -> Node | None:
    """What an assignment (`=`, `+=`, ...) or an increment writes, None for other nodes."""
    if node.type == "assignment_expression":
        return node.child_by_field_name("left")
    if node.type == "update_expression":
        return node.child_by_field_name("argument")
    return None


def inside(node: Node, outer: Node) -> bool:
    """`node` lies within `outer` (or is it)."""
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def enclosing(node: Node, types: tuple[str, ...], stop: Node | None = None) -> list[Node]:
    """The ancestors of `node` of the given types, innermost first (up to `stop`)."""
    out = []
    n = node.parent
    while n is not None and n != stop:
        if n.type in types:
            out.append(n)
        n = n.parent
    return out


def lane_varying(fn_body: Node) -> set[str]:
    """Local names whose value differs between a warp's lanes: assigned from threadIdx.x, or
    from another such name (to a fixpoint)."""
    varying: set[str] = set()
    assigns: list[tuple[str, Node]] = []
    for n in walk(fn_body):
        if n.type == "init_declarator":
            assigns.append((text(n.child_by_field_name("declarator")),
                            n.child_by_field_name("value")))
        elif n.type == "assignment_expression" and \
                n.child_by_field_name("left").type == "identifier":
            assigns.append((text(n.child_by_field_name("left")), n.child_by_field_name("right")))
        elif n.type == "for_statement":
            pass  # its init is a declaration, seen above
    changed = True
    while changed:
        changed = False
        for name, value in assigns:
            if name in varying or value is None:
                continue
            if _lane_dependent(value, varying):
                varying.add(name)
                changed = True
    return varying


def lane_dependent(node: Node, varying: set[str]) -> bool:
    return _lane_dependent(node, varying)


def _lane_dependent(node: Node, varying: set[str]) -> bool:
    for n in walk(node):
        if n.type == "field_expression" and text(n.child_by_field_name("argument")) == "threadIdx" \
                and text(n.child_by_field_name("field")) == "x":
            return True
        if n.type == "identifier" and text(n) in varying:
            return True
    return False
