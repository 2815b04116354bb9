"""readonly: `const T* __restrict__` on the pointer parameters the spec calls inputs.

Without it the compiler must assume that a store through any pointer may change what an input
points to, so it reloads inputs after every store, keeps loads in program order and cannot use
the read-only (non-coherent) load path. Called for when warps wait on memory or on each other
(memory latency, latency-bound) or L1/L2 serve reloads (L1, L2 bandwidth); it fits only a
kernel where that can happen: an input is read after a store (later in the code, or in the same
loop). A parameter passed on to another function gets `__restrict__` without `const` (so the
call still compiles). READONLY = 0 is the source as written.

It promises the compiler what the spec says: the inputs are separate buffers that the kernel
does not write. A kernel that is called in place (an output aliasing an input) must not keep it.
"""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.coder.moves import template as tpl
from pragma_ncu.coder.moves.base import (
    Applied,
    Edit,
    Knob,
    Move,
    Node,
    Refused,
    Subject,
    decode,
)
from pragma_ncu.syntax.functions import PointerParam

NAME = "readonly"
KNOB = "PNCU_READONLY"
RESTRICT = "__restrict__"


def apply(subject: Subject) -> Applied | Refused:
    params = ts.pointer_params(subject.kernel)
    args = subject.spec.args
    if len(ts.parameters(subject.kernel)) != len(args):
        return Refused(NAME, "the kernel's parameters do not match the spec's arguments")
    inputs = [p for p in params if args[p.index].role.value == "input"]
    todo = [p for p in inputs if not (p.const_target and p.restrict)]
    if not todo:
        return Refused(NAME, "no input pointer lacks const __restrict__" if inputs else
                       "the spec names no pointer argument as an input")
    body = ts.body(subject.kernel)
    accs = ts.accesses(body, {p.name for p in params})
    written = {a.root for a in accs if a.store}
    todo = [p for p in todo if p.name not in written]
    if not written:
        return Refused(NAME, "the kernel stores through no pointer parameter: nothing can alias")
    reread = [p for p in todo if _read_after_store(p.name, accs, body)]
    if not reread:
        return Refused(NAME, "no input is read after a store (nothing for __restrict__ to "
                             "free: loads already come before the stores)")
    passed = {name for name in _passed_to_calls(body)}
    edits, sites = [], []
    for p in reread:
        new = _declaration(subject, p, add_const=p.name not in passed)
        old = ts.text(p.node)
        edits.append(Edit(p.node.start_byte, p.node.end_byte,
                          tpl.when(KNOB, tpl.literal(new), old)))
        sites.append(f"{old.strip()} -> {new.strip()}")
    return Applied(NAME, (Knob(KNOB, (0, 1), 0),), tuple(edits), tuple(sites))


def _read_after_store(name: str, accs: list[ts.Access], body: Node) -> bool:
    """A load of `name` comes after a store through any pointer, or shares a loop with one."""
    stores = [a.node for a in accs if a.store]
    for load in (a.node for a in accs if a.root == name and a.load):
        loops = {n.id for n in ts.enclosing(load, ts.LOOPS, body)}
        for store in stores:
            if _statement_of(store).end_byte <= load.start_byte:
                return True
            if loops & {n.id for n in ts.enclosing(store, ts.LOOPS, body)}:
                return True
    return False


def _statement_of(node: Node) -> Node:
    """The statement a store is part of (its right-hand side is read before it writes)."""
    while node.parent is not None and not node.type.endswith(("statement", "declaration")):
        node = node.parent
    return node


def _passed_to_calls(body: Node) -> set[str]:
    """Names passed as pointers to a call (`f(x)`, `f(x + k)`, `f(&x[k])`): a const there
    might not compile."""
    out = set()
    for n in ts.walk(body):
        if n.type != "call_expression":
            continue
        for arg in n.child_by_field_name("arguments").named_children:
            if arg.type == "pointer_expression":
                arg = arg.child_by_field_name("argument")
                if arg is not None and arg.type == "subscript_expression":
                    arg = arg.child_by_field_name("argument")
            if arg is None:
                continue
            if arg.type == "identifier":
                out.add(ts.text(arg))
            elif arg.type == "binary_expression":
                out |= {ts.text(c) for c in arg.named_children if c.type == "identifier"}
    return out


def _declaration(subject: Subject, p: PointerParam, add_const: bool) -> str:
    """The parameter's declaration with `const` before its type (unless there) and
    `__restrict__` after its `*` (unless there)."""
    data = subject.data
    start, end = p.node.start_byte, p.node.end_byte
    declarator = p.node.child_by_field_name("declarator")
    star = next(c for c in declarator.children if c.type == "*")
    text = decode(data[start:star.end_byte])
    rest = decode(data[star.end_byte:end])
    if not p.restrict:
        text += " " + RESTRICT + ("" if rest[:1].isspace() else " ")
    text += rest
    if add_const and not p.const_target:
        text = "const " + text
    return text


MOVE = Move(
    NAME, ("memory_latency", "latency_bound", "l1_bandwidth", "l2_bandwidth"),
    "declares the spec's inputs const __restrict__, so loads need not wait for stores and can "
    "use the read-only path", apply,
    knobs=(KNOB,),
    never="never touches outputs or in/out pointers, nor an input the kernel writes")
