"""Unit tests for pragma_ncu.spec.expr: the safe evaluator of spec expressions."""

from __future__ import annotations

import re
import time

import pytest

from pragma_ncu.infra.errors import ExpressionError
from pragma_ncu.spec import expr

ENV = {"T": 37, "d": 1001, "BLOCK": 256, "eps": 0.5, "flag": True}


# --- arithmetic -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("T * d", 37 * 1001),
        ("2 * d", 2002),
        ("T - 40", -3),
        ("-T", -37),
        ("+T", 37),
        ("d // 10", 100),
        ("d % 10", 1),
        ("2 ** 10", 1024),
        ("BLOCK * eps", 128.0),
        ("7 // 2 * 2", 6),
    ],
)
def test_arithmetic(text, expected):
    value = expr.evaluate(text, ENV)
    assert value == expected
    assert type(value) is type(expected)


def test_plain_numbers_pass_through():
    assert expr.evaluate(42, {}) == 42
    assert expr.evaluate(1.5, {}) == 1.5


def test_whitespace_is_stripped():
    assert expr.evaluate("   T + 1  \n", ENV) == 38


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ceil_div(10, 3)", 4),
        ("ceil_div(9, 3)", 3),
        ("ceil_div(1, 256)", 1),
        ("ceil_div(T * d, BLOCK)", -(-(37 * 1001) // 256)),
        ("ceil_div(256, BLOCK)", 1),
        ("ceil_div(257, BLOCK)", 2),
        ("min(T, d)", 37),
        ("max(T, d)", 1001),
        ("min(3, 1, 2)", 1),
        ("max(BLOCK, 1024 // 8)", 256),
        ("abs(T - 40)", 3),
        ("log2(BLOCK)", 8.0),
    ],
)
def test_functions(text, expected):
    assert expr.evaluate(text, ENV) == expected


# --- `/` ---------------------------------------------------------------------------------------

def test_exact_true_division_stays_int():
    value = expr.evaluate("T * 2 / 2", ENV)
    assert value == 37
    assert type(value) is int
    value = expr.evaluate("BLOCK / 4", ENV)
    assert value == 64 and type(value) is int


def test_inexact_true_division_is_float():
    value = expr.evaluate("T / 2", ENV)
    assert value == 18.5
    assert type(value) is float


def test_true_division_with_float_operand_is_float():
    value = expr.evaluate("4.0 / 2", {})
    assert value == 2.0 and type(value) is float


def test_division_by_zero_is_expression_error():
    with pytest.raises(ExpressionError, match="cannot evaluate"):
        expr.evaluate("T / 0", ENV)
    with pytest.raises(ExpressionError, match="cannot evaluate"):
        expr.evaluate("T // (d - d)", ENV)


# --- comparisons, logic, conditionals ----------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("T < d", True),
        ("T > d", False),
        ("T <= 37", True),
        ("T >= 38", False),
        ("T == 37", True),
        ("T != 37", False),
        ("1 < T < d", True),
        ("1 < d < T", False),
        ("T < d and d < BLOCK", False),
        ("T < d or d < BLOCK", True),
        ("not flag", False),
        ("not (T > d)", True),
    ],
)
def test_comparisons_and_logic(text, expected):
    assert expr.evaluate(text, ENV) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("128 if d > 1024 else 256", 256),
        ("128 if d < 1024 else 256", 128),
        ("BLOCK if flag else 1", 256),
        ("1 if T % 2 == 0 else 2", 2),
    ],
)
def test_conditionals(text, expected):
    assert expr.evaluate(text, ENV) == expected


def test_conditional_does_not_evaluate_untaken_branch():
    # The untaken branch names an unknown variable; only the taken one is evaluated.
    assert expr.evaluate("1 if T > 0 else missing", ENV) == 1


@pytest.mark.parametrize("text", ["T is T", "T is not d"])
def test_identity_comparison_is_rejected(text):
    with pytest.raises(ExpressionError):
        expr.evaluate(text, ENV)


# --- unknown names -----------------------------------------------------------------------------

def test_unknown_name_lists_known_names():
    with pytest.raises(ExpressionError) as info:
        expr.evaluate("T * H", {"T": 1, "d": 2, "BLOCK": 3})
    msg = str(info.value)
    assert "'H'" in msg
    assert "unknown name" in msg
    assert "['BLOCK', 'T', 'd']" in msg  # the known names, sorted
    assert "'T * H'" in msg  # and the expression itself


# --- forbidden constructs ----------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("__import__('os')", "only the functions"),
        ("open('/etc/passwd')", "only the functions"),
        ("eval('1')", "only the functions"),
        ("print(1)", "only the functions"),
        ("T.real", "Attribute"),
        ("(1).__class__", "Attribute"),
        ("ceil_div.__globals__", "Attribute"),
        ("T[0]", "Subscript"),
        ("lambda: 1", "Lambda"),
        ("(lambda x: x)(1)", "only the functions"),
        ("min(*T)", "Starred"),
        ("T.bit_length()", "only the functions"),
        ("().__class__.__bases__[0].__subclasses__()", "only the functions"),
    ],
)
def test_forbidden_constructs(text, what):
    with pytest.raises(ExpressionError) as info:
        expr.evaluate(text, ENV)
    assert what in str(info.value)
    # parse() alone already rejects them, so no spec can smuggle them in
    with pytest.raises(ExpressionError):
        expr.parse(text)


def test_forbidden_call_message_lists_allowed_functions():
    with pytest.raises(ExpressionError) as info:
        expr.parse("open('x')")
    assert "['abs', 'ceil_div', 'log2', 'max', 'min']" in str(info.value)


@pytest.mark.parametrize("text", ["'abc'", "[1, 2]", "(1, 2)", "{1: 2}", "x := 3"])
def test_other_unsupported_nodes_raise(text):
    with pytest.raises(ExpressionError):
        expr.evaluate(text, {"x": 1})


@pytest.mark.parametrize("text", ["T +", "(T", "ceil_div(T,,d)", "", "T = 3"])
def test_syntax_error(text):
    with pytest.raises(ExpressionError, match="cannot parse expression"):
        expr.parse(text)


# --- names() -----------------------------------------------------------------------------------

def test_names_excludes_function_names():
    assert expr.names("ceil_div(T * d, BLOCK) + min(a, b)") == {"T", "d", "BLOCK", "a", "b"}


def test_names_of_constants_is_empty():
    assert expr.names("1 + 2 * 3") == set()


def test_names_in_conditional_and_comparison():
    assert expr.names("x if y > 0 else z") == {"x", "y", "z"}


def test_names_rejects_forbidden():
    with pytest.raises(ExpressionError):
        expr.names("open(T)")


# --- evaluate_int ------------------------------------------------------------------------------

def test_evaluate_int_accepts_integral_float():
    value = expr.evaluate_int("BLOCK * eps", ENV, "launch.block")
    assert value == 128 and type(value) is int


@pytest.mark.parametrize("text", ["T / 2", "T > 0", "eps"])
def test_evaluate_int_rejects_non_integers(text):
    with pytest.raises(ExpressionError) as info:
        expr.evaluate_int(text, ENV, "args.x.shape")
    assert "args.x.shape" in str(info.value)
    assert "expected an integer" in str(info.value)


# --- bounds: no expression takes long or grows without limit -----------------------------------

@pytest.mark.parametrize("text", ["9**9**7", "9**9**9**9", "2**2**2**2**2**2", "(10**10)**(10**10)",
                                  "T ** d ** BLOCK", "max(2, 3) ** 10**6"])
def test_a_tower_of_powers_fails_at_once(text):
    """Issue 25: `9**9**7` took 5 s and a taller tower hung; both spec and LLM-reply
    expressions go through here."""
    start = time.perf_counter()
    with pytest.raises(ExpressionError, match=r"beyond 2\*\*64"):
        expr.evaluate(text, ENV)
    assert time.perf_counter() - start < 0.05


@pytest.mark.parametrize(("text", "expected"), [("2 ** 63", 2**63), ("2 ** 64", 2**64),
                                                ("2 ** -3", 0.125), ("(-1) ** (10 ** 18)", 1),
                                                ("0.5 ** (10 ** 18)", 0.0)])
def test_powers_within_the_limit_are_computed(text, expected):
    assert expr.evaluate(text, ENV) == expected


@pytest.mark.parametrize("text", ["2 ** 64 + 1", "2 ** 40 * 2 ** 40", "T * 10 ** 18",
                                  "1e308 * 10", "1e400", "-(2 ** 64) - 1", "huge * huge"])
def test_values_beyond_the_magnitude_limit_are_refused(text):
    with pytest.raises(ExpressionError, match="beyond 2\\*\\*64|not a finite number"):
        expr.evaluate(text, {**ENV, "huge": 10**12})


@pytest.mark.parametrize(("text", "what"), [
    ("min(" + "T," * 300 + "T)", "at most 256 parts"),
    ("1+" * 300 + "1", "levels of nesting"),
    ("-" * 200 + "1", "levels of nesting"),
    ("(" * 250 + "1" + ")" * 250, "cannot parse"),  # the parser's own nesting limit
    ("T" * 1001, "1001 characters long"),
    ("min(T, key=d)", "positional arguments"),
    ("'a' * 10", "only numbers"),
    ("1j", "only numbers"),
    ("T\x00", "cannot parse"),
    ("T << 2", "LShift is not allowed"),
])
def test_size_depth_and_shape_limits(text, what):
    with pytest.raises(ExpressionError, match=re.escape(what)) as info:
        expr.parse(text)
    assert "\n" not in str(info.value) and len(str(info.value)) < 200


def test_a_syntax_warning_is_not_printed(capfd):
    with pytest.raises(ExpressionError):
        expr.parse("1if T else 2e")
    assert capfd.readouterr().err == ""
