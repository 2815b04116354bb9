"""How a function body touches its pointer parameters, in evaluation order.

`T*` alone does not say whether a kernel argument is an output or an inout: that depends on
whether the kernel reads what the array held before the launch. The rule used by `init`: walk the
body in evaluation order (source order; the right side of an assignment before its left, a `for`
loop's body before its step) and look at the FIRST access to the array's elements:

- a write (`y[i] = ...`, `*p = ...`) -> output: the initial values are overwritten before use;
- a read, a read-modify-write (`y[i] += ...`, `y[i]++`, `atomicAdd(&y[i], ...)`) -> inout;
- nothing but reads -> input (a `T*` that is never written);
- passed to a function this file does not define (a library call, inline PTX) -> inout, the
  safe assumption.

Accesses are followed through local aliases (`float* row = y + t * d;`, `auto& r = y[i];`,
`reinterpret_cast<float4*>(y)[i]`), through `__ldg`/`__stcs`-style intrinsics, atomics,
memcpy/memset and wmma's load/store_matrix_sync, and into functions defined in the same file
(`store<V>(out, i, v)`). The order is static: a loop whose later statement reads what an
earlier iteration wrote is judged by source order, and a kernel that writes only some elements
(a scatter) is an output by this rule but an inout in truth (its unwritten elements must keep
their values). That is why every role is written into the draft as a GUESS with the line it
rests on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pragma_ncu.syntax.facts import CFunction, SourceFacts
from pragma_ncu.syntax.tree import line_of

Node = Any

_CASTS = {"reinterpret_cast", "static_cast", "const_cast", "dynamic_cast"}
_PASS_THROUGH = {"__builtin_assume_aligned"}  # returns its pointer argument
_NO_ACCESS = {"__builtin_prefetch", "printf", "sizeof", "alignof", "__isGlobal", "__isShared",
              "__cvta_generic_to_global", "__cvta_generic_to_shared", "__prefetch_global_l1",
              "__prefetch_global_l2", "assert", "__assume", "__builtin_assume"}
_READS = re.compile(r"__ld(g|ca|cg|cs|lu|cv)$")
_WRITES = re.compile(r"__st(cg|cs|wb|wt)$")
_ATOMIC = re.compile(r"atomic[A-Z]\w*$")
_KNOWN = {  # name -> {pointer argument index: access}; other indices count as unknown
    **{n: {0: "write", 1: "read"} for n in ("memcpy", "memmove", "__builtin_memcpy",
                                             "__builtin_memmove", "__pipeline_memcpy_async")},
    **{n: {0: "write"} for n in ("memset", "__builtin_memset")},
    "store_matrix_sync": {0: "write"}, "load_matrix_sync": {1: "read"},  # nvcuda::wmma
}


@dataclass(frozen=True)
class Access:
    """One access to an array parameter: kind "read", "write", "update" (read, then write) or
    "unknown" (handed to code this file does not show)."""

    kind: str
    line: int
    text: str  # the expression, shortened
    via: str = ""  # for a call, the access inside the callee ("line 65: p[i] = v")

    def describe(self) -> str:
        where = f"line {self.line}: {self.text}"
        return f"{where} -> {self.via}" if self.via else where


def accesses(fn: CFunction, facts: SourceFacts) -> dict[str, tuple[Access, ...]]:
    """Every pointer parameter of `fn` -> its accesses, first to last."""
    tracker = _Tracker(facts)
    names = {p.name: (p.name, "ptr") for p in fn.params if p.pointers > 0}
    found = tracker.walk(fn.body, dict(names))
    return {p: tuple(a for name, a in found if name == p) for p in names}


def _short(node: Node) -> str:
    text = " ".join(node.text.decode(errors="replace").split())
    return text if len(text) <= 48 else text[:45] + "..."


def _is(a: Node | None, b: Node | None) -> bool:
    return a is not None and b is not None and a.id == b.id


def _call_name(call: Node) -> str:
    fn = call.child_by_field_name("function")
    while fn is not None and fn.type in ("template_function", "qualified_identifier"):
        fn = fn.child_by_field_name("name")
    return fn.text.decode() if fn is not None and fn.type == "identifier" else ""


def _has_pointer(type_node: Node | None) -> bool:
    if type_node is None:
        return False
    stack = [type_node]
    while stack:
        n = stack.pop()
        if n.type in ("abstract_pointer_declarator", "pointer_declarator"):
            return True
        stack.extend(n.children)
    return False


class _Tracker:
    """Walks bodies; follows calls into functions of the same file (memoized, cycle-safe)."""

    def __init__(self, facts: SourceFacts) -> None:
        self.facts = facts
        self.memo: dict[tuple[int, int, str], list[Access]] = {}
        self.active: set[tuple[int, int, str]] = set()

    def walk(self, body: Node | None, names: dict[str, tuple[str, str]]
             ) -> list[tuple[str, Access]]:
        out: list[tuple[str, Access]] = []
        if body is not None:
            self._visit(body, names, out)
        return out

    # --- evaluation order -------------------------------------------------------------------
    def _visit(self, node: Node, names: dict[str, tuple[str, str]],
               out: list[tuple[str, Access]]) -> None:
        kind = node.type
        if kind == "assignment_expression":
            for part in ("right", "left"):
                child = node.child_by_field_name(part)
                if child is not None:
                    self._visit(child, names, out)
            return
        if kind == "for_statement":
            for part in ("initializer", "condition", "body", "update"):
                child = node.child_by_field_name(part)
                if child is not None:
                    self._visit(child, names, out)
            return
        if kind == "init_declarator":
            declared = _declared_name(node.child_by_field_name("declarator"))
            names.pop(declared, None)  # a new variable shadows a parameter or an earlier alias
            value = node.child_by_field_name("value")
            if value is not None:
                self._visit(value, names, out)  # which may make `declared` an alias
            return
        if kind == "identifier" and node.text.decode() in names:
            param, state = names[node.text.decode()]
            self._classify(node, param, state, names, out)
            return
        for child in node.children:
            self._visit(child, names, out)

    # --- one use of a tracked name ----------------------------------------------------------
    def _classify(self, node: Node, param: str, state: str,
                  names: dict[str, tuple[str, str]], out: list[tuple[str, Access]]) -> None:
        while True:
            parent = node.parent
            if parent is None:
                return
            if parent.type in ("gnu_asm_input_operand", "gnu_asm_output_operand"):
                out.append((param, Access("unknown", line_of(parent), "inline asm")))
                return
            step = (self._pointer_step if state == "ptr" else self._element_step)(
                node, parent, param, names, out)
            if step is None:
                return
            node, state = parent, step

    def _pointer_step(self, node: Node, parent: Node, param: str,
                      names: dict[str, tuple[str, str]], out: list[tuple[str, Access]]
                      ) -> str | None:
        """Where a pointer value goes next: "ptr", "elem", or None when it stops here."""
        kind = parent.type
        if kind in ("parenthesized_expression", "comma_expression"):
            return "ptr"
        if kind == "cast_expression":
            return "ptr" if _has_pointer(parent.child_by_field_name("type")) else None
        if kind == "conditional_expression":
            return None if _is(parent.child_by_field_name("condition"), node) else "ptr"
        if kind == "binary_expression":
            op = parent.child_by_field_name("operator")
            other = [c for c in (parent.child_by_field_name("left"),
                                 parent.child_by_field_name("right")) if not _is(c, node)]
            if op is None or op.type not in ("+", "-"):
                return None  # a comparison or bit arithmetic on the address
            both = op.type == "-" and other and _mentions_any(other[0], names)
            return None if both else "ptr"
        if kind == "subscript_expression" and _is(parent.child_by_field_name("argument"), node):
            return "elem"
        if kind == "pointer_expression":
            op = parent.child_by_field_name("operator")
            return "elem" if op is not None and op.type == "*" else None
        if kind == "field_expression" and _is(parent.child_by_field_name("argument"), node):
            return "elem"
        if kind == "argument_list":
            self._call(parent, node, param, "ptr", names, out)
            return None
        if kind == "init_declarator" and _is(parent.child_by_field_name("value"), node):
            self._alias(parent, param, "ptr", names)
            return None
        if kind == "assignment_expression" and _is(parent.child_by_field_name("right"), node):
            left = parent.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                names[left.text.decode()] = (param, "ptr")
        return None

    def _element_step(self, node: Node, parent: Node, param: str,
                      names: dict[str, tuple[str, str]], out: list[tuple[str, Access]]
                      ) -> str | None:
        """Where an element (an lvalue in the array) goes next."""
        kind = parent.type
        if kind == "parenthesized_expression":
            return "elem"
        if kind in ("field_expression", "subscript_expression") and _is(
                parent.child_by_field_name("argument"), node):
            return "elem"
        if kind == "pointer_expression":
            op = parent.child_by_field_name("operator")
            return "ptr" if op is not None and op.type == "&" else "elem"
        if kind == "assignment_expression" and _is(parent.child_by_field_name("left"), node):
            op = parent.child_by_field_name("operator")
            plain = op is not None and op.type == "="
            out.append((param, Access("write" if plain else "update", line_of(parent),
                                      _short(parent))))
            return None
        if kind == "update_expression":
            out.append((param, Access("update", line_of(parent), _short(parent))))
            return None
        if kind == "init_declarator" and _is(parent.child_by_field_name("value"), node):
            declarator = parent.child_by_field_name("declarator")
            if declarator is not None and declarator.type == "reference_declarator":
                self._alias(parent, param, "elem", names)
                return None
        if kind == "argument_list":
            self._call(parent, node, param, "elem", names, out)
            return None
        out.append((param, Access("read", line_of(node), _short(node))))
        return None

    def _alias(self, init: Node, param: str, state: str,
               names: dict[str, tuple[str, str]]) -> None:
        """`float* row = y + ...;` or `auto& r = y[i];`: later uses of the name are uses of y."""
        declarator = init.child_by_field_name("declarator")
        name = _declared_name(declarator)
        decl = init.parent
        auto = decl is not None and any(c.type == "placeholder_type_specifier"
                                        for c in decl.children)
        pointer_like = declarator is not None and declarator.type in (
            "pointer_declarator", "reference_declarator")
        if name and (pointer_like or auto):
            names[name] = (param, state)

    # --- calls ------------------------------------------------------------------------------
    def _call(self, args: Node, arg: Node, param: str, state: str,
              names: dict[str, tuple[str, str]], out: list[tuple[str, Access]]) -> None:
        call = args.parent
        name = _call_name(call)
        index = next(i for i, c in enumerate(args.named_children) if _is(c, arg))
        line = line_of(call)
        if name in _CASTS:  # reinterpret_cast<float4*>(y): still y, unless cast to a number
            function = call.child_by_field_name("function")
            if _has_pointer(function.child_by_field_name("arguments") if function else None):
                self._classify(call, param, state, names, out)
            return
        if name in _PASS_THROUGH:
            self._classify(call, param, state, names, out)
            return
        builtin = self._builtin(name, index, state)
        if builtin is not None:
            out.append((param, Access(builtin, line, _short(call))))
            return
        if name in _NO_ACCESS:
            return
        found = [f for f in self.facts.named(name) if index < len(f.params)]
        if not found:  # a library function: it may read and write what it is given
            out.append((param, Access("unknown" if state == "ptr" else "read", line,
                                      _short(call))))
            return
        for inner in self._callee(found[0], index, state):
            out.append((param, Access(inner.kind, line, _short(call), inner.describe())))

    @staticmethod
    def _builtin(name: str, index: int, state: str) -> str | None:
        """The access a known intrinsic makes through its pointer argument `index`."""
        if state != "ptr":
            return None
        if _ATOMIC.match(name):
            return "update" if index == 0 else "read"
        if _READS.match(name):
            return "read"
        if _WRITES.match(name):
            return "write" if index == 0 else "read"
        if name in _KNOWN:
            return _KNOWN[name].get(index, "unknown")
        return None

    def _callee(self, fn: CFunction, index: int, state: str) -> list[Access]:
        target = fn.params[index]
        key = (fn.body.id if fn.body is not None else fn.line, index, state)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return []  # recursion: the outer walk covers it
        if target.pointers == 0 and not target.reference:
            return [Access("read", fn.line, target.text)] if state == "elem" else []
        self.active.add(key)
        inner_state = "elem" if state == "elem" and target.reference else "ptr"
        found = [a for _, a in self.walk(fn.body, {target.name: (target.name, inner_state)})]
        self.active.discard(key)
        self.memo[key] = found
        return found


def _declared_name(declarator: Node | None) -> str:
    while declarator is not None and declarator.type != "identifier":
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in declarator.named_children
                          if c.type == "identifier" or c.type.endswith("declarator")), None)
        declarator = inner
    return declarator.text.decode() if declarator is not None else ""


def _mentions(node: Node | None, name: str) -> bool:
    if node is None:
        return False
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier" and n.text.decode() == name:
            return True
        stack.extend(n.children)
    return False


def _mentions_any(node: Node, names: dict[str, tuple[str, str]]) -> bool:
    return any(_mentions(node, name) for name in names)
