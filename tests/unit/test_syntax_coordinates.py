"""The syntax layer's readers of a thread's coordinates: the built-in indices read in every
dimension, a flat index split by % and /, a guard's upper bounds, and how an access's address
moves as a coordinate steps (through the values names are declared once with)."""

from __future__ import annotations

from pragma_ncu import syntax as ts
from pragma_ncu.syntax import element as el


def kernel(body: str) -> ts.Node:
    tree = ts.syntax_tree('extern "C" __global__ void k(float* y, const float* x, const float* '
                          "w, int R, int C)\n{\n" + body + "}\n")
    return ts.function_named(tree, "k")[0]


def strides(body: str, names: set[str]) -> dict[str, str | None]:
    fn = kernel(body)
    return {ts.text(a.node): kind for a, kind in
            ts.address_strides(ts.body(fn), {"y", "x", "w"}, names)}


MATMUL = """    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    const float* xr = x + (size_t)row * C;
    float s = 0.0f;
    for (int k = 0; k < C; ++k) s += xr[k] * w[k * R + col];
    y[row * R + col] = s + x[row];
"""


def test_addresses_move_with_the_built_in_index_through_declared_values() -> None:
    assert strides(MATMUL, {"threadIdx.x"}) == {
        "xr[k]": "scaled", "w[k * R + col]": None, "y[row * R + col]": "scaled", "x[row]": "unit"}
    assert strides(MATMUL, {"threadIdx.y"}) == {
        "xr[k]": None, "w[k * R + col]": "unit", "y[row * R + col]": "unit", "x[row]": None}


def test_what_is_not_one_value_moves_some_other_way() -> None:
    body = """    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i;
    j += 1;
    y[j] = x[i / 2] + w[(int)x[i]];
"""
    assert strides(body, {"threadIdx.x"}) == {
        "y[j]": "other", "x[i / 2]": "other", "x[i]": "unit", "w[(int)x[i]]": "other"}
    values = ts.fixed_values(ts.body(kernel(body)))
    assert set(values) == {"i"}  # j is assigned again
    assert ts.computed_from(ts.body(kernel(body)), {"threadIdx.x"}) == {"threadIdx.x", "i", "j"}


def test_the_built_in_indices_are_read_through_their_fields() -> None:
    fn = kernel("    dim3 t = threadIdx;\n    int a = blockDim.y + gridDim.z;\n")
    assert [ts.text(r) for r in ts.builtin_reads(ts.body(fn))] == ["blockDim.y", "gridDim.z"]
    assert [ts.text(n) for n in ts.builtins_whole(ts.body(fn))] == ["threadIdx"]


def test_a_flat_index_split_by_one_divisor() -> None:
    split = ts.split_index(kernel(
        "    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    const int c = (int)(t / R), r = (int)(t % (R));\n    y[t] = 0.0f;\n"))
    assert isinstance(split, ts.Split)
    assert (split.index, split.remainder, split.quotient) == ("t", "r", "c")
    assert ts.text(split.divisor) == "(R)" and ts.text(split.division) == "t / R"
    other = ts.split_index(kernel("    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "    int r = t % R, c = t / C;\n"))
    assert isinstance(other, str) and "different numbers" in other
    assert "is not split" in str(ts.split_index(kernel(
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n    int r = t % R;\n")))


def test_a_guard_gives_the_upper_bound_of_each_name_it_tests() -> None:
    fn = kernel("    int r = threadIdx.x, c = threadIdx.y;\n    if (r >= R || C <= c) return;\n"
                "    if (c >= 7) return;\n    y[r] = 1.0f;\n")
    guard = el.guard_of(ts.body(fn), {"r", "c"})
    assert guard is not None and guard.early and len(guard.ifs) == 2
    store = next(n for n in ts.walk(ts.body(fn)) if ts.text(n) == "y[r] = 1.0f")
    assert guard.covers(store, ts.body(fn))
    assert guard.bounds() == "the guard bounds c twice"
    block = kernel("    int r = threadIdx.x, c = threadIdx.y;\n"
                   "    if ((r < R) && C > c) { y[r] = 1.0f; }\n    y[0] = 0.0f;\n")
    guard = el.guard_of(ts.body(block), {"r"})
    assert guard is not None and not guard.early
    assert {k: ts.text(v) for k, v in guard.bounds().items()} == {"r": "R", "c": "C"}
    inner, after = (n for n in ts.walk(ts.body(block)) if n.type == "subscript_expression")
    assert guard.covers(inner, ts.body(block)) and not guard.covers(after, ts.body(block))
    odd = kernel("    int r = threadIdx.x;\n    if (r != R) y[r] = 1.0f;\n")
    found = el.guard_of(ts.body(odd), {"r"})
    assert found is not None and "r != R is not an upper bound" in str(found.bounds())
