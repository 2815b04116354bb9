"""The syntax layer's 2-D readers: the global index along any axis, the thread-per-element
(x, y) shape with its guard, and how an address moves with a set of names, read through the
locals a body never changes."""

from __future__ import annotations

import pytest

from pragma_ncu import syntax as ts
from pragma_ncu.syntax import element as el

KERNEL = """__global__ void k(const float* in, float* out, int M, int N)
{
    const int n = blockIdx.z;
    const int col = (int)(blockDim.x * blockIdx.x) + threadIdx.x,
              row = threadIdx.y + blockIdx.y * blockDim.y;
    const float* base = in + (size_t)n * M * N;
    const int at = row * N + col;
    if (col >= N) return;
    if (row >= M) return;
    int moved = at;
    moved += 1;
    out[(size_t)col * M + row] = base[at] + base[moved] + in[2 * at] + in[row];
}
"""


def _kernel(source: str = KERNEL):  # type: ignore[no-untyped-def]
    return ts.function_named(ts.syntax_tree(source), "k")[0]


def _subscript(fn, text: str):  # type: ignore[no-untyped-def]
    return next(n for n in ts.walk(ts.body(fn)) if n.type == "subscript_expression"
                and ts.text(n) == text)


def test_the_global_index_is_read_along_every_axis() -> None:
    values = ts.fixed_values(ts.body(_kernel()))
    assert ts.axis_of(values["col"]) == "x" and ts.axis_of(values["row"]) == "y"
    assert ts.axis_of(values["n"]) is None and ts.axis_of(None) is None
    z = ts.syntax_tree("int k = blockIdx.z * blockDim.z + threadIdx.z;")
    assert ts.axis_of(next(n for n in ts.walk(z) if n.type == "binary_expression"
                           and "+" in ts.text(n.child_by_field_name("operator")))) == "z"


def test_the_plane_is_two_indices_and_the_returns_that_guard_them() -> None:
    found = el.plane(_kernel())
    assert isinstance(found, el.Plane)
    assert (found.lane.name, found.row.name) == ("col", "row")
    assert found.lane.decl == found.row.decl  # one declaration declares both
    assert found.early and len(found.guards) == 2
    assert found.in_range() == "!(col >= N) && !(row >= M)"
    assert [ts.text(s).split(" =")[0] for s in found.prologue] == [
        "const int col", "const float* base", "const int at"]
    assert [ts.first_line(s) for s in found.work(ts.body(_kernel()))] == [10, 11, 12]


@pytest.mark.parametrize(("old", "new", "why"), [
    ("threadIdx.y + blockIdx.y * blockDim.y", "threadIdx.y", "no pair of global indices"),
    ("    if (col >= N) return;\n    if (row >= M) return;\n", "    if (col >= N) return;\n",
     "does not bound both col and row"),
    ("    if (col >= N) return;\n", "    out[0] = 0.0f;\n    if (col >= N) return;\n",
     "not checked by an `if`"),
])
def test_the_plane_says_why_a_kernel_has_none(old: str, new: str, why: str) -> None:
    assert old in KERNEL
    got = el.plane(_kernel(KERNEL.replace(old, new)))
    assert isinstance(got, str) and why in got


def test_the_guarded_block_holds_the_work() -> None:
    block = KERNEL.replace("    if (col >= N) return;\n    if (row >= M) return;\n",
                           "    if (col < N && row < M) {\n").replace(
        "in[row];\n}", "in[row];\n    }\n}")
    found = el.plane(_kernel(block))
    assert isinstance(found, el.Plane) and not found.early
    assert found.in_range() == "col < N && row < M"
    assert len(found.work(ts.body(_kernel(block)))) == 3


def test_fixed_values_leave_out_what_changes() -> None:
    body = ts.body(_kernel())
    values = ts.fixed_values(body)
    assert {"n", "col", "row", "base", "at"} <= set(values) and "moved" not in values
    assert ts.changed_names(body) == {"moved"}


def test_an_address_moves_with_the_names_it_reads_through_fixed_locals() -> None:
    fn = _kernel()
    values = ts.fixed_values(ts.body(fn))
    store, through = _subscript(fn, "out[(size_t)col * M + row]"), _subscript(fn, "base[at]")
    assert ts.address_stride(store, {"row"}, values) == "unit"
    assert ts.address_stride(store, {"col"}, values) == "scaled"
    assert ts.address_stride(through, {"col"}, values) == "unit"  # at = row * N + col
    assert ts.address_stride(through, {"row"}, values) == "scaled"
    assert ts.address_stride(through, {"n"}, values) == "scaled"  # base = in + n * M * N
    assert ts.address_stride(_subscript(fn, "in[2 * at]"), {"col"}, values) == "scaled"
    assert ts.address_stride(_subscript(fn, "base[moved]"), {"col"}, values) is None
    assert not ts.depends_on(_subscript(fn, "base[moved]"), {"col"}, values)  # moved changes
    assert ts.depends_on(_subscript(fn, "in[row]"), {"row"}, values)
    deref = ts.syntax_tree("void f() { v = *(in + y * N + x); }")
    star = next(n for n in ts.walk(deref) if n.type == "pointer_expression")
    assert ts.address_stride(star, {"x"}) == "unit" and ts.address_stride(star, {"y"}) == "scaled"
    assert ts.stride(_subscript(fn, "base[at]").named_children[-1].named_children[0],
                     {"col"}) is None  # without the values, `at` is a name like any other
