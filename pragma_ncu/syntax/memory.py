"""Memory as a function's body touches it: reads and writes through its pointer parameters
(and pointers derived from them), its `__shared__` arrays, which names vary across a warp's
lanes, and how an access's address moves as some names step by one (`stride`,
`address_strides`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pragma_ncu.syntax.loops import Induction
from pragma_ncu.syntax.tree import (
    Node,
    assigned,
    compact,
    declarators,
    identifiers,
    mentions,
    text,
    walk,
)

SHARED = "__shared__"
CASTS = ("cast_expression", "parenthesized_expression")
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


# --- addresses and how a loop walks them -------------------------------------------------------

def address(node: Node | None) -> tuple[str | None, Node | None]:
    """(the pointer or array named, the index) of `a[k]`, `*(a + k)`, `*a`."""
    if node is None:
        return None, None
    if node.type == "subscript_expression":
        base = node.child_by_field_name("argument")
        indices = node.child_by_field_name("indices") or node.named_children[-1]
        inner = indices.named_children if indices.type == "subscript_argument_list" \
            else [indices]
        if base is not None and base.type == "identifier" and len(inner) == 1:
            return text(base), inner[0]
    elif node.type == "pointer_expression" and \
            text(node.child_by_field_name("operator")) == "*":
        arg = bare(node.child_by_field_name("argument"))
        if arg.type == "identifier":
            return text(arg), None
        if arg.type == "binary_expression" and text(arg.child_by_field_name("operator")) == "+":
            left, right = arg.child_by_field_name("left"), arg.child_by_field_name("right")
            if left.type == "identifier":
                return text(left), right
    return None, None


def bare(node: Node) -> Node:
    while node.type in CASTS and node.named_children:
        node = node.named_children[-1]
    return node


def stride(index: Node | None, names: set[str],
           values: Mapping[str, Node] | None = None) -> str | None:
    """How an index moves with the loop's variables `names`: "unit" (one of them added as it
    is: consecutive iterations, consecutive addresses), "scaled" (added times a factor), None
    (otherwise, or not at all). With `values` (`fixed_values`), a local computed from them is
    read through its value (`const int k = r * n + j;` then `a[k]`)."""
    if index is None:
        return None
    node = bare(index)
    if compact(node) in names and node.type in ("identifier", "field_expression"):
        return "unit"
    if node.type == "identifier":
        if text(node) in names:
            return "unit"
        inner = (values or {}).get(text(node))
        return stride(inner, names, _without(values, text(node))) if inner is not None else None
    if node.type != "binary_expression":
        return None
    op = text(node.child_by_field_name("operator"))
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    moving = [depends_on(left, names, values), depends_on(right, names, values)]
    if moving == [True, True] or not any(moving):
        return None
    inner, other = (left, right) if moving[0] else (right, left)
    if op == "+" or (op == "-" and moving[0]):
        return stride(inner, names, values)
    if op == "*" and stride(inner, names, values) is not None:
        return "scaled"
    return None


def _without(values: Mapping[str, Node] | None, name: str) -> dict[str, Node]:
    """`values` but `name` (read once on a path: a name never reaches itself)."""
    return {k: v for k, v in (values or {}).items() if k != name}


def depends_on(node: Node | None, names: set[str] | frozenset[str],
               values: Mapping[str, Node] | None = None) -> bool:
    """`node` reads one of `names` (identifiers, or built-in indices as written), or (with
    `values`) a local computed from one of them."""
    pending, seen = [node] if node is not None else [], set()
    while pending:
        for n in walk(pending.pop()):
            if n.type == "field_expression" and compact(n) in names:
                return True
            if n.type != "identifier":
                continue
            name = text(n)
            if name in names:
                return True
            if values and name in values and name not in seen:
                seen.add(name)
                pending.append(values[name])
    return False


def fixed_values(fn_body: Node) -> dict[str, Node]:
    """The locals a body declares once, with a value, and never changes or takes the address
    of: name -> that value (so that code reading the name reads the value)."""
    declared: dict[str, list[Node | None]] = {}
    for n in walk(fn_body):
        if n.type == "declaration":
            for d in n.children_by_field_name("declarator"):
                name = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
                while name is not None and name.type != "identifier":
                    name = name.child_by_field_name("declarator")
                if name is not None:
                    declared.setdefault(text(name), []).append(
                        d.child_by_field_name("value") if d.type == "init_declarator" else None)
    changed = changed_names(fn_body)
    return {name: found[0] for name, found in declared.items()
            if len(found) == 1 and found[0] is not None and name not in changed}


def computed_from(fn_body: Node, seeds: set[str]) -> set[str]:
    """`seeds` (identifiers or built-in indices as written, `threadIdx.x`) and the names a
    declaration or an assignment below `fn_body` computes from them, to a fixpoint."""
    flows: list[tuple[str, Node]] = []
    for n in walk(fn_body):
        if n.type == "declaration":
            flows += [(name, v) for name, d in declarators(n) if d.type == "init_declarator"
                      and (v := d.child_by_field_name("value")) is not None]
        target = assigned(n)
        if target is not None and target.type == "identifier":
            flows.append((text(target), n))
    out = set(seeds)
    changed = True
    while changed:
        changed = False
        for name, value in flows:
            if name not in out and depends_on(value, out, None):
                out.add(name)
                changed = True
    return out


def address_strides(fn_body: Node, params: set[str],
                    names: set[str]) -> list[tuple[Access, str | None]]:
    """Every access through `params` (and pointers derived from them), with how its address
    moves as `names` step by one: "unit" (by one element), "scaled" (by a multiple),
    "other" (some other way: divided, through a loaded index, a pointer stepped as it goes)
    or None (not at all). The address is the index and, through a pointer derived from a
    parameter, the pointer's own offset (`row = A + r * K; row[k]`)."""
    values = fixed_values(fn_body)
    moving = computed_from(fn_body, names)
    loose = moving - names - set(values)  # moving names whose value is not one expression
    derived = derived_pointers(fn_body, params)
    out = []
    for a in accesses(fn_body, params):
        base, index = address(a.node)
        if base is None:
            out.append((a, "other" if depends_on(a.node, moving, None) else None))
            continue
        parts = [p for p in (index, values.get(base) if base in derived else None)
                 if p is not None]
        touched = [p for p in parts if depends_on(p, names, values)]
        if base in loose or any(depends_on(p, loose, None) for p in parts):
            out.append((a, "other"))
        elif not touched:
            out.append((a, None))
        else:
            kind = stride(touched[0], names, values) if len(touched) == 1 else None
            out.append((a, kind or "other"))
    return out


def changed_names(fn_body: Node) -> set[str]:
    """The names a body assigns, increments or takes the address of (`&v`): those it may
    change after their declaration (parameters too)."""
    out = set()
    for n in walk(fn_body):
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression" or (
                n.type == "pointer_expression" and text(n.child_by_field_name("operator")) == "&"):
            target = n.child_by_field_name("argument")
        else:
            continue
        if target is not None and target.type == "identifier":
            out.add(text(target))
    return out


def address_stride(access: Node, names: set[str],
                   values: Mapping[str, Node] | None = None) -> str | None:
    """How the address of an access (`a[k]`, `*(a + k)`, `*a`) moves with `names`, its pointer
    read through `values` too (`const float* row = x + r * C;` then `row[j]`): "unit",
    "scaled", None (otherwise, or not at all)."""
    if access.type == "subscript_expression":
        base, index = address(access)
        if base is None:
            return None
        parts = [access.child_by_field_name("argument"), index]
    elif access.type == "pointer_expression" and \
            text(access.child_by_field_name("operator")) == "*":
        parts = [access.child_by_field_name("argument")]  # the address itself: a + k
    else:
        return None
    moving = [p for p in parts if p is not None and depends_on(p, names, values)]
    return stride(moving[0], names, values) if len(moving) == 1 else None


def walks_contiguous(loop: Node, inductions: tuple[Induction, ...], params: set[str],
                     fn_body: Node, element: str) -> bool:
    """The loop walks a row: some access whose address depends on `element` (the thread's
    output) moves by one element per iteration (`row[j]`, `*p` with `++p`) while adjacent
    outputs lie apart (`row = x + r * C`, or through a loaded index). Threads that share such
    a loop should take adjacent iterations. An access adjacent outputs read side by side
    (`x[i + t]`, `col = A + j`) or one all outputs read alike (`x[t]`) is no such walk."""
    unit = {i.name for i in inductions if i.step == "1"}
    inits = _initial_values(fn_body)
    fixed = fixed_values(fn_body)  # an offset computed once (`base = r * C`) read as its value
    depends = {n for n in _depending(fn_body, {element}) if n not in fixed} | {element}
    pointers = params | set(derived_pointers(fn_body, params))
    for a in accesses(loop, pointers):
        base, index = address(a.node)
        if base is None or not (base in unit or stride(index, unit) == "unit"):
            continue
        parts = [p for p in (index, inits.get(base)) if p is not None]
        if not any(depends_on(p, depends, fixed) for p in parts):
            continue  # all outputs read it alike
        if not any(stride(p, depends, fixed) == "unit" for p in parts):
            return True
    return False


def walks_across(loop: Node, params: set[str], fn_body: Node, element: str) -> bool:
    """Adjacent outputs read adjacent addresses in the loop: some access through `params` (or
    a pointer derived from one) adds `element` itself to its address (`x[r * C + c]`, or `col
    = x + c` then `col[r * C]`), so that threads given adjacent values of `element` read
    together what one thread reads in turn down a column."""
    inits = _initial_values(fn_body)
    pointers = params | set(derived_pointers(fn_body, params))
    for a in accesses(loop, pointers):
        base, index = address(a.node)
        if base is not None and any(stride(p, {element}) == "unit"
                                    for p in (index, inits.get(base)) if p is not None):
            return True
    return False


def _initial_values(fn_body: Node) -> dict[str, Node]:
    """name -> the value a declaration gives it."""
    out = {}
    for n in walk(fn_body):
        if n.type == "init_declarator":
            target = n.child_by_field_name("declarator")
            while target is not None and target.type != "identifier":
                target = target.child_by_field_name("declarator")
            if target is not None:
                out[text(target)] = n.child_by_field_name("value")
    return out


def _depending(fn_body: Node, seeds: set[str]) -> set[str]:
    """`seeds` and the names whose values are computed from them (to a fixpoint)."""
    out = set(seeds)
    inits = _initial_values(fn_body)
    changed = True
    while changed:
        changed = False
        for name, value in inits.items():
            if name not in out and value is not None and mentions(value, out):
                out.add(name)
                changed = True
    return out
