"""Memory as a function's body touches it: reads and writes through its pointer parameters
(and pointers derived from them), its `__shared__` arrays, and which names vary across a
warp's lanes."""

from __future__ import annotations

from dataclasses import dataclass

from pragma_ncu.syntax.tree import Node, identifiers, text, walk

SHARED = "__shared__"
# The bytes of the element types kernels commonly use (the CUDA vector types too).
TYPE_BYTES = {
    "float": 4, "int": 4, "unsigned": 4, "unsigned int": 4, "uint32_t": 4, "int32_t": 4,
    "double": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8, "uint64_t": 8,
    "half": 2, "__half": 2, "__nv_bfloat16": 2, "short": 2, "unsigned short": 2,
    "char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "float2": 8, "int2": 8,
    "float4": 16, "int4": 16, "__half2": 4, "half2": 4, "__nv_bfloat162": 4}


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


# --- shared memory ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SharedArray:
    """A `__shared__` declaration's name, its declaration and its sizes (outermost first; an
    `extern __shared__ T a[];` has none), as written."""

    name: str
    decl: Node
    dims: tuple[Node, ...]
    extern: bool

    @property
    def type(self) -> str:
        return " ".join(text(self.decl.child_by_field_name("type")).split())


def is_shared(decl: Node) -> bool:
    """`decl` is a declaration with the `__shared__` qualifier."""
    return decl.type == "declaration" and any(
        c.type == "type_qualifier" and text(c) == SHARED for c in decl.children)


def shared_arrays(root: Node) -> list[SharedArray]:
    """Every `__shared__` array and scalar declared below `root`, in source order."""
    out = []
    for decl in walk(root):
        if not is_shared(decl):
            continue
        extern = any(c.type == "storage_class_specifier" and text(c) == "extern"
                     for c in decl.children)
        for declarator in decl.children_by_field_name("declarator"):
            dims: list[Node] = []
            node = declarator.child_by_field_name("declarator") \
                if declarator.type == "init_declarator" else declarator
            while node is not None and node.type == "array_declarator":
                size = node.child_by_field_name("size")
                if size is not None:
                    dims.insert(0, size)
                node = node.child_by_field_name("declarator")
            if node is not None and node.type == "identifier":
                out.append(SharedArray(text(node), decl, tuple(dims), extern))
    return out
