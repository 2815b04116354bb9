"""Safe evaluation of the small arithmetic expressions used in specs.

Expressions name dims and params (`ceil_div(T * d, BLOCK)`); they are parsed with `ast` and only
arithmetic, comparisons, boolean logic, conditionals and a few functions are allowed, so a spec
can never run code.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

from pragma_ncu.errors import ExpressionError

Number = int | float | bool

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


_FUNCS: dict[str, Callable[..., Any]] = {
    "ceil_div": _ceil_div, "min": min, "max": max, "abs": abs, "log2": math.log2,
}


def function_names() -> frozenset[str]:
    """The functions an expression may call."""
    return frozenset(_FUNCS)


def _true_div(a: Any, b: Any) -> Any:
    # Exact integer division stays integral, so `T / 2` can be used as a size when it divides.
    if isinstance(a, int) and isinstance(b, int) and b != 0 and a % b == 0:
        return a // b
    return a / b


def parse(text: str) -> ast.Expression:
    """Parse and vet an expression; raises ExpressionError naming what is not allowed."""
    try:
        tree = ast.parse(str(text).strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse expression {text!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in _FUNCS
        ):
            raise ExpressionError(
                f"in {text!r}: only the functions {sorted(_FUNCS)} may be called"
            )
        if isinstance(node, ast.Compare) and any(type(op) not in _CMPOPS for op in node.ops):
            raise ExpressionError(f"in {text!r}: only ==, !=, <, <=, >, >= compare values")
        if isinstance(node, (ast.Attribute, ast.Subscript, ast.Lambda, ast.Starred)):
            raise ExpressionError(f"in {text!r}: {type(node).__name__} is not allowed")
    return tree


def names(text: str) -> set[str]:
    """The variable names an expression uses."""
    tree = parse(text)
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)
              and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called


def evaluate(text: str | Number, env: Mapping[str, Number]) -> Number:
    """Evaluate `text` with the variables in `env`; plain numbers pass through."""
    if isinstance(text, (int, float)):
        return text
    tree = parse(text)
    try:
        return _eval(tree.body, env, str(text))
    except ExpressionError:
        raise
    except (ArithmeticError, TypeError, ValueError) as exc:
        raise ExpressionError(f"cannot evaluate {text!r}: {exc}") from None


def _eval(node: ast.AST, env: Mapping[str, Number], text: str) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ExpressionError(f"in {text!r}: unknown name '{node.id}' (known: {sorted(env)})")
        return env[node.id]
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, env, text), _eval(node.right, env, text)
        if isinstance(node.op, ast.Div):
            return _true_div(left, right)
        if type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, env, text)
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        if isinstance(node.op, ast.Not):
            return not value
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, env, text) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env, text)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = _eval(comp, env, text)
            if type(op) not in _CMPOPS or not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        cond = _eval(node.test, env, text)
        return _eval(node.body if cond else node.orelse, env, text)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_eval(a, env, text) for a in node.args]
        return _FUNCS[node.func.id](*args)
    raise ExpressionError(f"in {text!r}: {type(node).__name__} is not allowed")


def evaluate_int(text: str | Number, env: Mapping[str, Number], what: str) -> int:
    """Evaluate to an integer; raises ExpressionError naming `what` when it is not one."""
    value = evaluate(text, env)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExpressionError(f"{what}: {text!r} gave {value!r}, expected an integer")
    return value
