"""Safe evaluation of the small arithmetic expressions used in specs and LLM replies.

Expressions name dims and params (`ceil_div(T * d, BLOCK)`); they are parsed with `ast` and only
arithmetic, comparisons, boolean logic, conditionals and a few functions are allowed, so a spec
can never run code. Evaluation is bounded too, so that no expression can take long: the text,
its nodes and its nesting have limits, and every value computed must stay within
MAGNITUDE_LIMIT (a `**` that would pass it is refused before it is computed: `9**9**7` fails at
once instead of taking seconds).
"""

from __future__ import annotations

import ast
import math
import operator
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from pragma_ncu.infra.errors import ExpressionError

Number = int | float | bool

MAX_LENGTH = 1000  # characters; a spec's longest expressions are a few dozen
MAX_NODES = 256
MAX_DEPTH = 32  # nesting of operations
MAGNITUDE_LIMIT = 2**64  # no size, count, byte or FLOP total of a kernel reaches it

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_UNARY = (ast.USub, ast.UAdd, ast.Not)
_ALLOWED = (ast.Expression, ast.Constant, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp,
            ast.BoolOp, ast.And, ast.Or, ast.Compare, ast.IfExp, ast.Call, ast.Div,
            *_BINOPS, *_CMPOPS, *_UNARY)


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


def _shown(text: str) -> str:
    """`text` as messages quote it: one line, at most 60 characters."""
    flat = " ".join(str(text).split())
    return repr(flat if len(flat) <= 60 else flat[:57] + "...")


def parse(text: str) -> ast.Expression:
    """Parse and vet an expression; raises ExpressionError naming what is not allowed."""
    text = str(text).strip()
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression {_shown(text)} is {len(text)} characters long "
                              f"(at most {MAX_LENGTH})")
    try:
        with warnings.catch_warnings():  # "invalid decimal literal" and the like
            warnings.simplefilter("ignore")
            tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse expression {_shown(text)}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError):  # NUL bytes; nesting the parser refuses
        raise ExpressionError(f"cannot parse expression {_shown(text)}") from None
    _vet(tree, text)
    return tree


def _vet(tree: ast.Expression, text: str) -> None:
    """Only the allowed nodes, at most MAX_NODES of them, nested at most MAX_DEPTH deep."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    count = 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES or depth > MAX_DEPTH:
            what = f"{MAX_NODES} parts" if count > MAX_NODES else f"{MAX_DEPTH} levels of nesting"
            raise ExpressionError(f"expression {_shown(text)} is too large (at most {what})")
        _vet_node(node, text)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _vet_node(node: ast.AST, text: str) -> None:
    if not isinstance(node, _ALLOWED):
        raise ExpressionError(f"in {_shown(text)}: {type(node).__name__} is not allowed")
    if isinstance(node, ast.Constant) and (type(node.value) not in (int, float, bool)):
        raise ExpressionError(f"in {_shown(text)}: only numbers may be written as constants")
    if isinstance(node, ast.Call) and not (
        isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords
    ):
        raise ExpressionError(
            f"in {_shown(text)}: only the functions {sorted(_FUNCS)} may be called (with "
            "positional arguments)"
        )


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
        return _bounded(_eval(tree.body, env, str(text)), str(text))
    except ExpressionError:
        raise
    except (ArithmeticError, TypeError, ValueError) as exc:
        raise ExpressionError(f"cannot evaluate {_shown(str(text))}: {exc}") from None


def _bounded(value: Any, text: str) -> Any:
    """`value`, when it is finite and within MAGNITUDE_LIMIT."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ExpressionError(f"{_shown(text)} is not a finite number ({value})")
    if isinstance(value, (int, float)) and abs(value) > MAGNITUDE_LIMIT:
        raise ExpressionError(f"{_shown(text)} goes beyond 2**64 (a value of "
                              f"{_magnitude(value)}): no size or count is that large")
    return value


def _magnitude(value: int | float) -> str:
    if isinstance(value, float) or value.bit_length() < 1000:
        return f"{float(value):.3g}"
    return f"about 2**{value.bit_length() - 1}"


def power(base: Any, exponent: Any, text: str) -> Any:
    """`base ** exponent`, refused before it is computed when the result would pass the
    limit (a tower such as 9**9**7 is billions of digits)."""
    if (isinstance(base, (int, float)) and isinstance(exponent, (int, float))
            and exponent > 0 and abs(base) > 1
            and exponent * math.log2(abs(base)) > math.log2(MAGNITUDE_LIMIT)):
        raise ExpressionError(f"in {_shown(text)}: {_magnitude(base)} ** "
                              f"{_magnitude(exponent)} goes beyond 2**64")
    return base ** exponent


def _eval(node: ast.AST, env: Mapping[str, Number], text: str) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return _bounded(node.value, text)
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ExpressionError(f"in {_shown(text)}: unknown name '{node.id}' (known: "
                                  f"{sorted(env)})")
        return env[node.id]
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, env, text), _eval(node.right, env, text)
        if isinstance(node.op, ast.Div):
            return _bounded(_true_div(left, right), text)
        if isinstance(node.op, ast.Pow):
            return _bounded(power(left, right, text), text)
        if type(node.op) in _BINOPS:
            return _bounded(_BINOPS[type(node.op)](left, right), text)
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
        return _bounded(_FUNCS[node.func.id](*args), text)
    raise ExpressionError(f"in {_shown(text)}: {type(node).__name__} is not allowed")


def evaluate_int(text: str | Number, env: Mapping[str, Number], what: str) -> int:
    """Evaluate to an integer; raises ExpressionError naming `what` when it is not one."""
    value = evaluate(text, env)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExpressionError(f"{what}: {_shown(str(text))} gave {value!r}, expected an "
                              "integer")
    return value
