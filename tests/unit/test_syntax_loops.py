"""The loop readers of the syntax layer: a while loop stepped by its last statements, what a
statement list reads before it sets it (a loop variable reset and reused after the loop)."""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.syntax import loops as st


def _loop(source: str, kind: str = "while_statement"):  # type: ignore[no-untyped-def]
    tree = ts.syntax_tree(source)
    return next(n for n in ts.walk(tree) if n.type == kind), tree


def test_a_while_loop_stepped_by_its_last_statements_is_read() -> None:
    loop, _ = _loop("__global__ void k(const float* x, int N, int C) { long long off = 0; "
                    "int r = 0; while (r < N) { float a = x[off]; off += C; r++; } }")
    got = st.inductions(loop)
    assert not isinstance(got, str)
    assert [(i.name, i.step) for i in got] == [("off", "C"), ("r", "1")]
    assert [ts.text(s) for s in st.steps(loop)] == ["off += C;", "r++;"]


def test_an_accumulation_before_the_step_is_no_step() -> None:
    """`ss += v * v` stands before `j++` but adds what the body computes: it accumulates."""
    loop, _ = _loop("__global__ void k(const float* x, int C) { float ss = 0.f; int j = 0; "
                    "while (j < C) { float v = x[j]; ss += v * v; j++; } }")
    got = st.inductions(loop)
    assert not isinstance(got, str) and [i.name for i in got] == ["j"]
    loaded, _ = _loop("__global__ void k(const int* s, int C) { int j = 0, p = 0; "
                      "while (j < C) { p += s[j]; j++; } }")
    got = st.inductions(loaded)
    assert not isinstance(got, str) and [i.name for i in got] == ["j"]


def test_reads_first_tells_a_reset_from_a_read() -> None:
    _, tree = _loop("__global__ void k(int* y, int C) { int j = 0; while (j < C) j++; "
                    "j = 0; while (j < C) { y[j] = 1; j++; } for (j = 0; j < C; ++j) y[j] = 2; "
                    "for (int j = 0; j < 3; ++j) y[j] = 3; y[0] = j; }")
    stmts = ts.statements(ts.body(ts.functions(tree)[0]))
    after_first = stmts[2:]
    assert not ts.reads_first(after_first, "j")  # `j = 0;` sets it before any read
    assert not ts.reads_first(stmts[4:], "j")  # a for loop's initializer sets it
    assert not ts.reads_first(stmts[5:5], "j")
    assert ts.reads_first(stmts[5:], "j")  # its own j aside, `y[0] = j` reads it
    assert ts.reads_first([stmts[3]], "j")  # the while's test reads it first
